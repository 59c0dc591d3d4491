//! The wrapper under the runtime's fake driver (FUSERUN_LIBCUDA naming
//! build/rt/libfakecuda.so, as examples/rust/run.sh sets it): no GPU. The
//! fake logs each launch and keeps the last one's parameter bytes, read
//! here through the same loaded library (dlopen of the same path). Run one
//! test at a time (--test-threads=1): the fake's log is the process's.
use fuserun::{Arg, Device, Elem};
use std::ffi::{CStr, CString};
use std::os::raw::{c_char, c_int, c_void};

extern "C" {
    fn dlopen(file: *const c_char, flags: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, name: *const c_char) -> *mut c_void;
}

struct Fake {
    start: extern "C" fn(),
    count: extern "C" fn() -> c_int,
    line: extern "C" fn(c_int) -> *const c_char,
    last_args: extern "C" fn(*mut usize) -> *const u8,
}

/// the fake's log and last arguments; None (the test says SKIP) without FUSERUN_LIBCUDA
fn fake() -> Option<Fake> {
    let path = std::env::var("FUSERUN_LIBCUDA").ok()?;
    let path = CString::new(path).unwrap();
    unsafe {
        let h = dlopen(path.as_ptr(), 2 /* RTLD_NOW */);
        assert!(!h.is_null(), "cannot load {path:?}");
        let sym = |n: &CStr| {
            let p = dlsym(h, n.as_ptr());
            assert!(!p.is_null(), "the fake has no {n:?}");
            p
        };
        Some(Fake {
            start: std::mem::transmute::<*mut c_void, extern "C" fn()>(sym(c"fakecuda_log_start")),
            count: std::mem::transmute::<*mut c_void, extern "C" fn() -> c_int>(sym(c"fakecuda_log_count")),
            line: std::mem::transmute::<*mut c_void, extern "C" fn(c_int) -> *const c_char>(sym(c"fakecuda_log_line")),
            last_args: std::mem::transmute::<*mut c_void, extern "C" fn(*mut usize) -> *const u8>(sym(c"fakecuda_last_args")),
        })
    }
}

impl Fake {
    fn launches(&self) -> Vec<String> {
        (0..(self.count)()).map(|i| unsafe { CStr::from_ptr((self.line)(i)) }.to_string_lossy().into_owned()).collect()
    }
    /// the last launch's parameter struct, as 8-byte slots
    fn slots(&self) -> Vec<u64> {
        let mut n = 0usize;
        let p = (self.last_args)(&mut n);
        let b = unsafe { std::slice::from_raw_parts(p, n) };
        b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect()
    }
}

macro_rules! fake_or_skip {
    () => {
        match fake() {
            Some(f) => f,
            None => {
                eprintln!("SKIP: FUSERUN_LIBCUDA is not set (examples/rust/run.sh sets it to the fake driver)");
                return;
            }
        }
    };
}

#[test]
fn fused_call_launches_one_kernel_with_the_arguments() {
    let fake = fake_or_skip!();
    let dev = Device::open(0).expect("the fake device");
    let art = dev.load(fuserun::kl_divergence_manifest()).expect("the artifact build.rs made");
    let q = dev.upload(&vec![0.5f32; 1000]).unwrap();
    let p = dev.upload(&vec![0.25f32; 1000]).unwrap();
    let kl = dev.alloc(4).unwrap();
    let mut call = art.prepare("fused", &[1000]).unwrap();
    (fake.start)();
    call.run(&[Arg::Tensor(&q, Elem::F32), Arg::Tensor(&p, Elem::F32), Arg::Tensor(&kl, Elem::F32)]).unwrap();
    call.run(&[Arg::Tensor(&q, Elem::F32), Arg::Tensor(&p, Elem::F32), Arg::Tensor(&kl, Elem::F32)]).unwrap();
    let log = fake.launches();
    assert_eq!(log.len(), 2, "{log:?}");
    assert!(log.iter().all(|l| l.starts_with("launch kl_divergence_f0 ")), "{log:?}");
    // the args struct: q, p, kl, the temp (kept on chip: 0), N
    let s = fake.slots();
    assert_eq!(&s[..5], &[q.ptr(), p.ptr(), kl.ptr(), 0, 1000], "{s:x?}");
}

#[test]
fn unfused_call_launches_each_stage() {
    let fake = fake_or_skip!();
    let dev = Device::open(0).unwrap();
    let art = dev.load(fuserun::kl_divergence_manifest()).unwrap();
    let (q, p, kl) = (dev.alloc(4 * 77).unwrap(), dev.alloc(4 * 77).unwrap(), dev.alloc(4).unwrap());
    let mut call = art.prepare("unfused", &[77]).unwrap();
    (fake.start)();
    call.run(&[Arg::Tensor(&q, Elem::F32), Arg::Tensor(&p, Elem::F32), Arg::Tensor(&kl, Elem::F32)]).unwrap();
    let kernels: Vec<String> = fake.launches().iter().filter_map(|l| l.split(' ').nth(1).map(String::from)).collect();
    assert_eq!(kernels, ["kl_divergence_u0", "kl_divergence_u1"]);
    assert_ne!(fake.slots()[3], 0, "the unfused temp is placed in the scratch");
}

#[test]
fn wrong_arguments_are_refused_with_the_parameter_named() {
    let _fake = fake_or_skip!();
    let dev = Device::open(0).unwrap();
    let art = dev.load(fuserun::kl_divergence_manifest()).unwrap();
    let (q, p, kl) = (dev.alloc(400).unwrap(), dev.alloc(400).unwrap(), dev.alloc(4).unwrap());
    let mut call = art.prepare("fused", &[100]).unwrap();
    let e = call.run(&[Arg::Tensor(&q, Elem::F32), Arg::Tensor(&p, Elem::F32)]).unwrap_err();
    assert!(e.message.contains("takes 3 arguments") && e.message.contains("given 2"), "{e}");
    let e = call.run(&[Arg::Tensor(&q, Elem::F64), Arg::Tensor(&p, Elem::F32), Arg::Tensor(&kl, Elem::F32)]).unwrap_err();
    assert!(e.message.contains("argument 1 (q): f32 expected, f64 given"), "{e}");
    // the fp8 types are spelled as the manifest spells them (f8e5m2 beside f8e4m3)
    let e = call.run(&[Arg::Tensor(&q, Elem::F8E5M2), Arg::Tensor(&p, Elem::F32), Arg::Tensor(&kl, Elem::F32)]).unwrap_err();
    assert!(e.message.contains("argument 1 (q): f32 expected, f8e5m2 given"), "{e}");
    let e = call.run(&[Arg::Tensor(&q, Elem::F32), Arg::Tensor(&p, Elem::F8E4M3), Arg::Tensor(&kl, Elem::F32)]).unwrap_err();
    assert!(e.message.contains("argument 2 (p): f32 expected, f8e4m3 given"), "{e}");
    let e = call.run(&[Arg::Tensor(&q, Elem::F32), Arg::Float(Elem::F32, 1.0), Arg::Tensor(&kl, Elem::F32)]).unwrap_err();
    assert!(e.message.contains("argument 2 (p)") && e.message.contains("tensor"), "{e}");
    assert_eq!((e.code, e.name.as_str()), (fuserun::ERR_INVALID, "invalid argument"));
}

#[test]
fn bad_variant_sizes_and_paths_are_refused() {
    let _fake = fake_or_skip!();
    let dev = Device::open(0).unwrap();
    let art = dev.load(fuserun::kl_divergence_manifest()).unwrap();
    assert!(art.prepare("fastest", &[10]).err().is_some_and(|e| e.message.contains("fastest")));
    assert!(art.prepare("fused", &[0]).is_err(), "a size of 0");
    assert!(art.prepare("fused", &[10, 10]).is_err(), "two sizes for one");
    assert!(dev.load(std::path::Path::new("/nonexistent/x.manifest")).is_err());
}

#[test]
fn buffers_copy_both_ways_and_check_their_length() {
    let _fake = fake_or_skip!();
    let dev = Device::open(0).unwrap();
    let b = dev.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    let mut back = [0f32; 3];
    b.read(&mut back).unwrap();
    assert_eq!(back, [1.0, 2.0, 3.0]);
    assert_eq!(b.write(&[0f32; 4]).unwrap_err().code, fuserun::ERR_INVALID, "16 bytes into 12");
}

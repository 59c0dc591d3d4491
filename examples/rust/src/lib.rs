//! A small safe wrapper over libfuserun's generic entry point: a device, an
//! artifact loaded from its manifest, device buffers, and a variant's call
//! prepared once per sizes (fz_call_prepare) and run with checked
//! arguments (fz_call_run). No generated code is compiled: the manifest's
//! launch recipe says what to launch. Every handle is released on drop, in
//! the order the C API needs (a call before its artifact, an artifact
//! before its device), which the borrows enforce.
mod ffi;

use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::{c_char, c_int};
use std::path::Path;
use std::ptr;

/// A libfuserun error: its FZ_ERR_* code, what fz_strerror calls it
/// ("invalid argument"), and the message the handle held (which check
/// failed, for which argument).
#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub code: i32,
    pub name: String,
    pub message: String,
}

/// FZ_ERR_INVALID, fuserun.h's first error code
pub const ERR_INVALID: i32 = 1;

fn invalid(message: String) -> Error {
    Error { code: ERR_INVALID, name: text(unsafe { ffi::fz_strerror(ERR_INVALID) }), message }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn check(code: c_int, message: impl FnOnce() -> String) -> Result<()> {
    if code == 0 {
        return Ok(());
    }
    Err(Error { code, name: text(unsafe { ffi::fz_strerror(code) }), message: message() })
}

fn c_string(s: &str, what: &str) -> Result<CString> {
    CString::new(s).map_err(|_| invalid(format!("{what} holds a NUL byte")))
}

/// An element type as the manifest spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    F64,
    F32,
    F16,
    BF16,
    /// e4m3 bytes (`f8e4m3`): tensor-core operands, and outputs (stored saturated)
    F8E4M3,
    /// e5m2 bytes (`f8e5m2`): tensor-core operands, and outputs (stored saturated)
    F8E5M2,
    I64,
    I32,
}

impl Elem {
    fn name(self) -> &'static CStr {
        match self {
            Elem::F64 => c"f64",
            Elem::F32 => c"f32",
            Elem::F16 => c"f16",
            Elem::BF16 => c"bf16",
            Elem::F8E4M3 => c"f8e4m3",
            Elem::F8E5M2 => c"f8e5m2",
            Elem::I64 => c"i64",
            Elem::I32 => c"i32",
        }
    }
}

/// A CUDA device (fz_device_open): closed on drop.
pub struct Device {
    raw: *mut ffi::fz_device,
}

impl Device {
    pub fn open(ordinal: i32) -> Result<Device> {
        let mut raw = ptr::null_mut();
        let mut err = vec![0 as c_char; ffi::FZ_ERRMSG_SIZE];
        let rc = unsafe { ffi::fz_device_open(ordinal, &mut raw, err.as_mut_ptr()) };
        check(rc, || text(err.as_ptr()))?;
        Ok(Device { raw })
    }

    fn check(&self, rc: c_int) -> Result<()> {
        check(rc, || text(unsafe { ffi::fz_device_error(self.raw) }))
    }

    /// bytes of device memory, uninitialised
    pub fn alloc(&self, bytes: usize) -> Result<Buffer<'_>> {
        let mut ptr = 0;
        self.check(unsafe { ffi::fz_alloc(self.raw, bytes, &mut ptr) })?;
        Ok(Buffer { dev: self, ptr, bytes })
    }

    /// a buffer holding these values
    pub fn upload<T: Copy>(&self, values: &[T]) -> Result<Buffer<'_>> {
        let b = self.alloc(std::mem::size_of_val(values))?;
        b.write(values)?;
        Ok(b)
    }

    pub fn sync(&self) -> Result<()> {
        self.check(unsafe { ffi::fz_device_sync(self.raw) })
    }

    /// The artifact at manifest (NAME.manifest, verified against its files), loaded on this device.
    pub fn load(&self, manifest: &Path) -> Result<Artifact<'_>> {
        let path = c_string(&manifest.to_string_lossy(), "the manifest's path")?;
        let mut raw = ptr::null_mut();
        self.check(unsafe { ffi::fz_artifact_load(self.raw, path.as_ptr(), &mut raw) })?;
        Ok(Artifact { dev: self, raw })
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        unsafe { ffi::fz_device_close(self.raw) }
    }
}

/// Device memory (fz_alloc): freed on drop.
pub struct Buffer<'d> {
    dev: &'d Device,
    ptr: ffi::fz_ptr,
    bytes: usize,
}

impl Buffer<'_> {
    pub fn ptr(&self) -> u64 {
        self.ptr
    }

    pub fn len(&self) -> usize {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    fn fits(&self, bytes: usize) -> Result<()> {
        if bytes <= self.bytes {
            return Ok(());
        }
        Err(invalid(format!("{bytes} bytes for a buffer of {}", self.bytes)))
    }

    /// copies values to the buffer's start (synchronously)
    pub fn write<T: Copy>(&self, values: &[T]) -> Result<()> {
        let n = std::mem::size_of_val(values);
        self.fits(n)?;
        self.dev.check(unsafe { ffi::fz_copy_to_device(self.dev.raw, self.ptr, values.as_ptr().cast(), n, ptr::null_mut()) })
    }

    /// copies the buffer's start into values (synchronously)
    pub fn read<T: Copy>(&self, values: &mut [T]) -> Result<()> {
        let n = std::mem::size_of_val(values);
        self.fits(n)?;
        self.dev.check(unsafe { ffi::fz_copy_to_host(self.dev.raw, values.as_mut_ptr().cast(), self.ptr, n, ptr::null_mut()) })
    }
}

impl Drop for Buffer<'_> {
    fn drop(&mut self) {
        unsafe { ffi::fz_free(self.dev.raw, self.ptr) };
    }
}

/// One argument of a call: the parameters in the manifest's order (its
/// param lines), a tensor as a buffer and the element type it holds, a
/// rank-0 input by value.
pub enum Arg<'a> {
    Tensor(&'a Buffer<'a>, Elem),
    Float(Elem, f64),
    Int(Elem, i64),
}

impl Arg<'_> {
    fn raw(&self) -> ffi::fz_arg {
        let (elem, scalar, ptr, f, i) = match *self {
            Arg::Tensor(b, e) => (e, 0, b.ptr, 0.0, 0),
            Arg::Float(e, v) => (e, 1, 0, v, 0),
            Arg::Int(e, v) => (e, 1, 0, 0.0, v),
        };
        ffi::fz_arg { type_: elem.name().as_ptr(), scalar, ptr, f, i }
    }
}

/// An artifact loaded on a device: unloaded on drop.
pub struct Artifact<'d> {
    dev: &'d Device,
    raw: *mut ffi::fz_artifact,
}

impl<'d> Artifact<'d> {
    fn check(&self, rc: c_int) -> Result<()> {
        check(rc, || text(unsafe { ffi::fz_artifact_error(self.raw) }))
    }

    /// The variant ("fused" or "unfused") at these sizes (the manifest's
    /// size lines, in order), prepared: the recipe evaluated once, the
    /// scratch allocated and zeroed.
    pub fn prepare(&self, variant: &str, sizes: &[i64]) -> Result<Call<'_, 'd>> {
        let v = c_string(variant, "the variant")?;
        let n = sizes.len() as c_int;
        let mut bytes = 0u64;
        self.check(unsafe { ffi::fz_call_scratch(self.raw, v.as_ptr(), sizes.as_ptr(), n, &mut bytes) })?;
        let scratch = self.dev.alloc(bytes.max(1) as usize)?;
        self.dev.check(unsafe { ffi::fz_memset(self.dev.raw, scratch.ptr, 0, scratch.bytes, ptr::null_mut()) })?;
        let mut raw = ptr::null_mut();
        self.check(unsafe { ffi::fz_call_prepare(self.raw, v.as_ptr(), sizes.as_ptr(), n, scratch.ptr, &mut raw) })?;
        Ok(Call { art: self, raw, _scratch: scratch })
    }
}

impl Drop for Artifact<'_> {
    fn drop(&mut self) {
        unsafe { ffi::fz_artifact_unload(self.raw) }
    }
}

/// A prepared call: run it as often as wanted, one run at a time (its
/// scratch holds the variant's temps). Released on drop, then its scratch.
pub struct Call<'a, 'd> {
    art: &'a Artifact<'d>,
    raw: *mut ffi::fz_prepared_call,
    _scratch: Buffer<'d>,
}

impl Call<'_, '_> {
    /// Launches on the default stream, asynchronously; the arguments are
    /// checked first (count, element type, tensor or scalar, a pointer).
    pub fn run(&mut self, args: &[Arg]) -> Result<()> {
        let raw: Vec<ffi::fz_arg> = args.iter().map(Arg::raw).collect();
        self.art.check(unsafe { ffi::fz_call_run(self.raw, raw.as_ptr(), raw.len() as c_int, ptr::null_mut()) })
    }
}

impl Drop for Call<'_, '_> {
    fn drop(&mut self) {
        unsafe { ffi::fz_call_release(self.raw) }
    }
}

/// The artifact build.rs made (fusec -o OUT_DIR specs/kl_divergence.fuse).
pub fn kl_divergence_manifest() -> &'static Path {
    Path::new(concat!(env!("OUT_DIR"), "/kl_divergence.manifest"))
}

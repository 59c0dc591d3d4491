//! runtime/fuserun.h's entry points this crate calls, declared by hand (no
//! bindgen: nothing from the network). The types are the header's.
#![allow(non_camel_case_types)]
use std::os::raw::{c_char, c_int, c_uchar};

pub const FZ_ERRMSG_SIZE: usize = 1024;
pub type fz_ptr = u64;

#[repr(C)]
pub struct fz_device {
    _private: [u8; 0],
}
#[repr(C)]
pub struct fz_artifact {
    _private: [u8; 0],
}
#[repr(C)]
pub struct fz_stream {
    _private: [u8; 0],
}
#[repr(C)]
pub struct fz_prepared_call {
    _private: [u8; 0],
}

/// fz_arg: a tensor's device pointer, or a rank-0 input by value.
#[repr(C)]
pub struct fz_arg {
    pub type_: *const c_char,
    pub scalar: c_int,
    pub ptr: fz_ptr,
    pub f: f64,
    pub i: i64,
}

extern "C" {
    pub fn fz_strerror(code: c_int) -> *const c_char;
    pub fn fz_device_open(ordinal: c_int, out: *mut *mut fz_device, errbuf: *mut c_char) -> c_int;
    pub fn fz_device_close(dev: *mut fz_device);
    pub fn fz_device_error(dev: *const fz_device) -> *const c_char;
    pub fn fz_device_sync(dev: *mut fz_device) -> c_int;
    pub fn fz_alloc(dev: *mut fz_device, bytes: usize, out: *mut fz_ptr) -> c_int;
    pub fn fz_free(dev: *mut fz_device, ptr: fz_ptr) -> c_int;
    pub fn fz_copy_to_device(dev: *mut fz_device, dst: fz_ptr, src: *const u8, bytes: usize, s: *mut fz_stream) -> c_int;
    pub fn fz_copy_to_host(dev: *mut fz_device, dst: *mut u8, src: fz_ptr, bytes: usize, s: *mut fz_stream) -> c_int;
    pub fn fz_memset(dev: *mut fz_device, dst: fz_ptr, value: c_uchar, bytes: usize, s: *mut fz_stream) -> c_int;
    pub fn fz_artifact_load(dev: *mut fz_device, manifest: *const c_char, out: *mut *mut fz_artifact) -> c_int;
    pub fn fz_artifact_unload(art: *mut fz_artifact);
    pub fn fz_artifact_error(art: *const fz_artifact) -> *const c_char;
    pub fn fz_call_scratch(art: *mut fz_artifact, variant: *const c_char, sizes: *const i64, nsizes: c_int, bytes: *mut u64)
        -> c_int;
    pub fn fz_call_prepare(art: *mut fz_artifact, variant: *const c_char, sizes: *const i64, nsizes: c_int, scratch: fz_ptr,
                           out: *mut *mut fz_prepared_call) -> c_int;
    pub fn fz_call_run(call: *mut fz_prepared_call, args: *const fz_arg, nargs: c_int, stream: *mut fz_stream) -> c_int;
    pub fn fz_call_release(call: *mut fz_prepared_call);
}

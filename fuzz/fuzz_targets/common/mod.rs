//! Helpers shared by the deflate and zstd fuzz targets: a global allocator that measures
//! peak live heap bytes, independent CRC-32 / Adler-32, format checks.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering::Relaxed};

use cmrx::deflate::{self, DeflateError};

/// The system allocator, counting live bytes while armed.
struct Counting;

static ARMED: AtomicBool = AtomicBool::new(false);
static LIVE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);

fn grew(by: isize) {
    if ARMED.load(Relaxed) {
        let live = LIVE.fetch_add(by, Relaxed) + by;
        PEAK.fetch_max(live, Relaxed);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size() as isize);
        System.alloc(layout)
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grew(layout.size() as isize);
        System.alloc_zeroed(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        grew(-(layout.size() as isize));
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        grew(new_size as isize - layout.size() as isize);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Runs `f` and returns its result with the peak of Rust heap bytes it
/// allocated and had live at once (what it freed of older memory counts
/// against it, so this can only over-estimate by never going negative).
pub fn peak_heap<R>(f: impl FnOnce() -> R) -> (R, usize) {
    LIVE.store(0, Relaxed);
    PEAK.store(0, Relaxed);
    ARMED.store(true, Relaxed);
    let r = f();
    ARMED.store(false, Relaxed);
    (r, PEAK.load(Relaxed).max(0) as usize)
}

pub type VecDecoder = fn(&[u8], usize) -> Result<Vec<u8>, DeflateError>;
pub type BufDecoder = fn(&[u8], &mut [MaybeUninit<u8>], usize) -> Result<usize, DeflateError>;

thread_local! {
    static FIXED: RefCell<Vec<MaybeUninit<u8>>> = const { RefCell::new(Vec::new()) };
}

/// Decodes `data` with `vec_fn` under a cap, checks the memory bound and the
/// result's size, and that one call of `buf_fn` into a buffer of exactly
/// `cap` bytes agrees. Returns `vec_fn`'s result.
pub fn check_decoder(
    data: &[u8],
    cap: usize,
    vec_fn: VecDecoder,
    buf_fn: BufDecoder,
) -> Result<Vec<u8>, DeflateError> {
    let (r, peak) = peak_heap(|| vec_fn(data, cap));
    assert!(peak <= cap, "{peak} bytes of heap live at once, cap {cap}");
    match &r {
        Ok(v) => assert!(v.len() <= cap, "{} bytes out, cap {cap}", v.len()),
        Err(DeflateError::Data | DeflateError::TooBig) => {}
        Err(e) => panic!("decoder returned {e:?}"),
    }
    FIXED.with(|fixed| {
        let mut fixed = fixed.borrow_mut();
        if fixed.len() != cap {
            fixed.resize(cap, MaybeUninit::new(0xa5));
        }
        let got = buf_fn(data, &mut fixed[..], cap).map(|n| {
            assert!(n <= cap);
            // SAFETY: on Ok(n) the decoder initialised fixed[..n] (and the
            // buffer was initialised when it was made anyway).
            unsafe { std::slice::from_raw_parts(fixed.as_ptr().cast::<u8>(), n) }.to_vec()
        });
        assert_eq!(got, r, "fixed {cap}-byte buffer vs the growth loop");
    });
    r
}

/// memGzip's 10-byte header.
pub const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// `gz` is a gzip member framed as memGzip frames it, holding `plain`.
pub fn check_gzip_member(gz: &[u8], plain: &[u8]) {
    assert!(
        gz.len() <= deflate::gzip_bound(plain.len()),
        "gzip over its bound"
    );
    assert!(gz.len() >= 18);
    assert_eq!(gz[..10], GZIP_HEADER, "not memGzip's header");
    let t = &gz[gz.len() - 8..];
    assert_eq!(
        u32::from_le_bytes([t[0], t[1], t[2], t[3]]),
        crc32(plain),
        "CRC-32"
    );
    assert_eq!(
        u32::from_le_bytes([t[4], t[5], t[6], t[7]]),
        plain.len() as u32,
        "ISIZE"
    );
}

/// `z` is an RFC 1950 stream as Compress::Zlib::compress writes, holding `plain`.
pub fn check_zlib_stream(z: &[u8], plain: &[u8]) {
    assert!(
        z.len() <= deflate::zlib_bound(plain.len()),
        "zlib over its bound"
    );
    assert!(z.len() >= 6);
    assert_eq!(z[0], 0x78, "CMF: deflate, 32 KiB window");
    assert_eq!((u16::from(z[0]) << 8 | u16::from(z[1])) % 31, 0, "FCHECK");
    assert_eq!(z[1] & 0x20, 0, "FDICT set");
    let t = &z[z.len() - 4..];
    assert_eq!(
        u32::from_be_bytes([t[0], t[1], t[2], t[3]]),
        adler32(plain),
        "Adler-32"
    );
}

/// CRC-32 (IEEE, reflected), table-driven; independent of libdeflate's.
pub fn crc32(data: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xedb8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    !data.iter().fold(!0u32, |c, &b| {
        table[((c ^ u32::from(b)) & 0xff) as usize] ^ (c >> 8)
    })
}

/// Adler-32 (RFC 1950).
pub fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for chunk in data.chunks(5552) {
        for &x in chunk {
            a += u32::from(x);
            b += a;
        }
        a %= 65521;
        b %= 65521;
    }
    b << 16 | a
}

//! What the zstd tests share: values like a cache's (JSON records), the
//! dictionaries trained on them, frames made by hand, and the `zstd`
//! command's help (tests that run it skip when it is not installed).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use super::{lookup, register, train, Dictionary, MAGIC};
use crate::testing::Rng;

/// A JSON value like a cached API response: a user record with a few
/// nested lists, 100 B to a few KB.
fn json_value(rng: &mut Rng) -> Vec<u8> {
    let names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace"];
    let langs = ["Perl", "Rust", "C", "Go", "Python", "JavaScript"];
    let id = rng.below(10_000_000);
    let mut s = format!(
        r#"{{"id":{id},"login":"{}{}","node_id":"MDQ6VXNlcj{:08x}","type":"User","site_admin":{},"url":"https://api.example.com/users/{id}","created_at":"20{:02}-{:02}-{:02}T{:02}:{:02}:00Z""#,
        names[rng.below(names.len())],
        rng.below(1000),
        rng.next_u64() as u32,
        rng.below(2) == 0,
        10 + rng.below(15),
        1 + rng.below(12),
        1 + rng.below(28),
        rng.below(24),
        rng.below(60),
    );
    let repos = rng.below(12);
    s.push_str(r#","repos":["#);
    for r in 0..repos {
        if r > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            r#"{{"name":"project-{}","language":"{}","stargazers_count":{},"fork":{},"description":"A {} library for {} things"}}"#,
            rng.below(500),
            langs[rng.below(langs.len())],
            rng.below(5000),
            rng.below(3) == 0,
            langs[rng.below(langs.len())],
            names[rng.below(names.len())],
        ));
    }
    s.push_str("]}");
    s.into_bytes()
}

pub(super) fn json_values(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = Rng(seed);
    (0..n).map(|_| json_value(&mut rng)).collect()
}

pub(super) fn refs(values: &[Vec<u8>]) -> Vec<&[u8]> {
    values.iter().map(|v| &v[..]).collect()
}

/// A 16 KiB dictionary trained once on 600 JSON values, registered.
pub(super) fn dict() -> &'static Arc<Dictionary> {
    static DICT: OnceLock<Arc<Dictionary>> = OnceLock::new();
    DICT.get_or_init(|| {
        let samples = json_values(600, 1);
        let bytes = train(&refs(&samples), 16 << 10).unwrap();
        let id = register(&bytes).unwrap();
        lookup(id).unwrap()
    })
}

/// Another trained dictionary, never registered.
pub(super) fn unregistered_dict() -> &'static Dictionary {
    static DICT: OnceLock<Dictionary> = OnceLock::new();
    DICT.get_or_init(|| {
        let samples = json_values(300, 99);
        Dictionary::from_bytes(&train(&refs(&samples), 4096).unwrap()).unwrap()
    })
}

pub(super) fn corpus() -> Vec<(&'static str, Vec<u8>)> {
    let mut rng = Rng(0x1234_5678_9abc_def0);
    let values = json_values(20, 2);
    vec![
        ("empty", Vec::new()),
        ("one byte", b"x".to_vec()),
        ("nul", vec![0]),
        ("all bytes", (0..=255u8).collect()),
        ("json small", values[0].clone()),
        ("json values", values.concat()),
        ("zeros 1 MiB", vec![0; 1 << 20]),
        ("random 100 KiB", rng.bytes(100 << 10)),
        ("random 31", rng.bytes(31)),
    ]
}

/// The frame header fields of `frame`: (content size, dictionary ID,
/// checksum flag), parsed here independently of libzstd.
pub(super) fn header(frame: &[u8]) -> (Option<u64>, Option<u32>, bool) {
    assert_eq!(frame[..4], MAGIC);
    let fhd = frame[4];
    let single = fhd & 0x20 != 0;
    let mut pos = 5 + usize::from(!single);
    let did_len = [0, 1, 2, 4][usize::from(fhd & 3)];
    let mut did = 0u32;
    for i in 0..did_len {
        did |= u32::from(frame[pos + i]) << (8 * i);
    }
    pos += did_len;
    let fcs_len = match fhd >> 6 {
        0 => usize::from(single),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let mut fcs = 0u64;
    for i in 0..fcs_len {
        fcs |= u64::from(frame[pos + i]) << (8 * i);
    }
    if fcs_len == 2 {
        fcs += 256;
    }
    (
        (fcs_len > 0).then_some(fcs),
        (did_len > 0 && did != 0).then_some(did),
        fhd & 4 != 0,
    )
}

/// A block of a hand-made frame.
pub(super) enum Block<'a> {
    Raw(&'a [u8]),
    Rle(u8, usize),
}

/// A zstd frame made by hand: a window of 2^window_log bytes, 8-byte
/// content size field if `content_size` is given, 4-byte dictionary ID if
/// `dict_id` is, then `blocks` (at most 128 KiB each).
pub(super) fn craft(
    content_size: Option<u64>,
    window_log: u8,
    dict_id: Option<u32>,
    blocks: &[Block],
) -> Vec<u8> {
    let mut f = MAGIC.to_vec();
    let fcs_flag = if content_size.is_some() { 3 << 6 } else { 0 };
    let did_flag = if dict_id.is_some() { 3 } else { 0 };
    f.push(fcs_flag | did_flag);
    f.push((window_log - 10) << 3);
    if let Some(id) = dict_id {
        f.extend_from_slice(&id.to_le_bytes());
    }
    if let Some(size) = content_size {
        f.extend_from_slice(&size.to_le_bytes());
    }
    for (i, block) in blocks.iter().enumerate() {
        let last = u32::from(i + 1 == blocks.len());
        let (kind, size) = match block {
            Block::Raw(b) => (0u32, b.len()),
            Block::Rle(_, n) => (1u32, *n),
        };
        let head = last | (kind << 1) | ((size as u32) << 3);
        f.extend_from_slice(&head.to_le_bytes()[..3]);
        match block {
            Block::Raw(b) => f.extend_from_slice(b),
            Block::Rle(v, _) => f.push(*v),
        }
    }
    f
}

/// `total` copies of `byte` as 128 KiB RLE blocks.
pub(super) fn rle_blocks(byte: u8, total: usize) -> Vec<Block<'static>> {
    let mut blocks = Vec::new();
    let mut left = total;
    while left > 0 {
        let n = left.min(128 << 10);
        blocks.push(Block::Rle(byte, n));
        left -= n;
    }
    if blocks.is_empty() {
        blocks.push(Block::Raw(&[]));
    }
    blocks
}

// ------------------------------------------------------ the zstd command

/// The `zstd` command, if it runs; else prints why the test is skipped.
pub(super) fn zstd_command(test: &str) -> Option<()> {
    let ok = Command::new("zstd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        eprintln!("{test}: skipped: the zstd command is not available");
    }
    ok.then_some(())
}

/// A temporary directory, removed on drop.
pub(super) struct TempDir(pub(super) PathBuf);
impl TempDir {
    pub(super) fn new() -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "cmrx-zstd-test-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
    pub(super) fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.0.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `zstd args...` with `stdin` piped in (so that zstd does not know
/// its size); returns stdout, panicking on failure.
pub(super) fn zstd(args: &[&dyn AsRef<std::ffi::OsStr>], stdin: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new("zstd")
        .args(args.iter().map(|a| a.as_ref()))
        .arg("-q")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let writer = std::thread::spawn(move || input.write_all(&stdin));
    let out = child.wait_with_output().unwrap();
    // zstd reading a file instead may close its stdin unread.
    match writer.join().unwrap() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => panic!("{e}"),
        _ => {}
    }
    assert!(
        out.status.success(),
        "zstd {:?}: {}",
        args.iter()
            .map(|a| a.as_ref().to_owned())
            .collect::<Vec<_>>(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

pub(super) fn path_arg(p: &Path) -> String {
    p.to_str().unwrap().to_owned()
}

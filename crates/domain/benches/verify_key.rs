//! In-process cost of verifying a presented key before the database is asked: the `Bearer`
//! header, the shape and CRC32 checksum, and the SHA-256 digest that is looked up.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use domain::auth::{bearer_token, digest, parse, NewToken, TokenKind};
use domain::common::ports::RandomSource;

/// Deterministic bytes: the benchmark measures parsing, not the OS random source.
struct Fixed;

impl RandomSource for Fixed {
    fn fill(&self, buf: &mut [u8]) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(37).wrapping_add(11);
        }
    }
}

fn verify(c: &mut Criterion) {
    let key = NewToken::generate(TokenKind::ApiKey, &Fixed).secret;
    let header = format!("Bearer {key}");
    let mut typo = key.clone().into_bytes();
    typo[20] = if typo[20] == b'a' { b'b' } else { b'a' };
    let typo = String::from_utf8(typo).unwrap_or_default();

    c.bench_function("header + parse + checksum + sha256 (valid key)", |b| {
        b.iter(|| bearer_token(black_box(header.as_bytes())).ok().and_then(|t| parse(t).ok()))
    });
    c.bench_function("parse + checksum, refused (bad checksum)", |b| b.iter(|| parse(black_box(&typo)).is_err()));
    c.bench_function("sha256 digest only", |b| b.iter(|| digest(black_box(&key))));
    c.bench_function("mint a key (generate, digest, mask)", |b| {
        b.iter(|| {
            let t = NewToken::generate(TokenKind::ApiKey, &Fixed);
            (t.digest(), t.masked())
        })
    });
}

criterion_group!(benches, verify);
criterion_main!(benches);

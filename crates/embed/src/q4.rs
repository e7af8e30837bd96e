//! Products with the 4-bit weights the e5 file holds, computed in integers.
//!
//! The file stores each weight matrix as Q4_0: for every output and every 32
//! consecutive inputs, a half-float scale and 32 values in 0..=15 that stand for
//! `value − 8`. Here they are kept exactly so (one byte a value, regrouped for the
//! kernel), and a product's input rows are cut into the same 32-value blocks and
//! rounded to 8-bit integers with a scale of their own (`max |x| / 127`). Each
//! block's dot product is then exact integer arithmetic, and only its sum is scaled
//! back: `Σ_blocks d_w · d_x · (Σ (v − 8) · q)`. Nothing is lost on the weights; the
//! only rounding is the inputs' to 8 bits a block.
//!
//! Why: a question's pass is bound by reading the weights and a batch's by
//! multiply-adds. The 4-bit values as bytes are half the halves the float path
//! reads, and one AVX2 `vpmaddubsw` does 32 byte products where a float FMA does 8.
//! The sums cannot overflow: a value is at most 15 and an input at most 127 in
//! magnitude, so the sixteen products each 16-bit lane collects over a block stay
//! under 15 · 127 · 16 = 30,480.

use rayon::prelude::*;

/// Inputs per block (one scale each), as in the file.
pub(crate) const QK: usize = 32;
/// Output columns the kernel computes side by side (one AVX2 register of sums).
const GROUP: usize = 8;
/// Bytes of one Q4_0 block in the file: a half scale and 16 bytes of nibbles.
pub(crate) const BLOCK_BYTES: usize = 18;

/// A weight matrix, regrouped: for each group of [`GROUP`] output columns, for each
/// block of [`QK`] inputs, eight steps of four inputs, each step 32 bytes (the
/// group's eight columns × four inputs, a column's four together); and each group's
/// and block's eight scales.
pub(crate) struct Packed {
    q: Vec<u8>,
    d: Vec<f32>,
    pub inputs: usize,
    pub outputs: usize,
}

/// A product's input rows rounded to 8 bits by blocks of [`QK`]: the values, each
/// block's scale, and eight times each block's sum (what the values' offset of 8
/// adds to a block's dot product, taken off again).
pub(crate) struct Inputs {
    q: Vec<i8>,
    d: Vec<f32>,
    s: Vec<i32>,
    k: usize,
}

/// Which part of a product to compute: rows `r0..r0 + rows` of the inputs
/// times columns `c0..c0 + n` (here whole groups), written with row stride `os`.
/// The encoder hands every product out in such parts, half-float ones too.
#[derive(Clone, Copy)]
pub(crate) struct Part {
    pub r0: usize,
    pub rows: usize,
    pub c0: usize,
    pub n: usize,
    pub os: usize,
}

impl Part {
    /// Rows `r0..r0 + rows` across all `width` columns, into rows of `width`.
    pub fn every_column(r0: usize, rows: usize, width: usize) -> Part {
        Part {
            r0,
            rows,
            c0: 0,
            n: width,
            os: width,
        }
    }
}

/// Whether [`Packed`] can hold a matrix of these sizes.
pub(crate) fn fits(inputs: usize, outputs: usize) -> bool {
    inputs > 0 && inputs.is_multiple_of(QK) && outputs > 0 && outputs.is_multiple_of(GROUP)
}

impl Packed {
    /// From Q4_0 rows in PyTorch's `[out][in]` layout, `outputs` rows of
    /// `inputs / 32` blocks (each block: a half scale, then 16 bytes whose low
    /// nibble is value j and high nibble value j + 16). The caller checks [`fits`]
    /// and the length.
    pub fn from_q4_0(raw: &[u8], outputs: usize, inputs: usize) -> Packed {
        debug_assert!(fits(inputs, outputs));
        let blocks = inputs / QK;
        debug_assert_eq!(raw.len(), outputs * blocks * BLOCK_BYTES);
        let mut q = vec![0u8; outputs * inputs];
        let mut d = vec![0f32; outputs * blocks];
        for c in 0..outputs {
            let (g, cc) = (c / GROUP, c % GROUP);
            for b in 0..blocks {
                let src = &raw[(c * blocks + b) * BLOCK_BYTES..][..BLOCK_BYTES];
                let at = g * blocks + b;
                d[at * GROUP + cc] =
                    half::f16::from_bits(u16::from_le_bytes([src[0], src[1]])).to_f32();
                for j in 0..QK {
                    let byte = src[2 + j % 16];
                    let v = if j < 16 { byte & 0x0f } else { byte >> 4 };
                    q[(at * 8 + j / 4) * 32 + cc * 4 + j % 4] = v;
                }
            }
        }
        Packed {
            q,
            d,
            inputs,
            outputs,
        }
    }

    /// `part` of `x` times these weights, plus `bias` (starting at column
    /// `part.c0`), into `out`.
    pub fn product(&self, x: &Inputs, part: Part, bias: &[f32], out: &mut [f32]) {
        let (rows, n) = (part.rows, part.n);
        if rows == 0 || n == 0 {
            return;
        }
        // What the kernels index, checked once: they read and write by pointer.
        assert!(part.c0.is_multiple_of(GROUP) && n.is_multiple_of(GROUP));
        assert!(part.c0 + n <= self.outputs);
        assert!(x.k == self.inputs && (part.r0 + rows) * x.k <= x.q.len());
        assert!(bias.len() >= n && out.len() >= (rows - 1) * part.os + n);
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA; the bounds were checked above.
            return unsafe { avx2::product(self, x, part, bias, out) };
        }
        self.plain(x, part, bias, out)
    }

    /// The same, one column at a time in plain Rust.
    fn plain(&self, x: &Inputs, part: Part, bias: &[f32], out: &mut [f32]) {
        let Part {
            r0,
            rows,
            c0,
            n,
            os,
        } = part;
        let blocks = self.inputs / QK;
        for r in 0..rows {
            let row = r0 + r;
            let xq = &x.q[row * x.k..(row + 1) * x.k];
            for c in c0..c0 + n {
                let (g, cc) = (c / GROUP, c % GROUP);
                let mut acc = bias[c - c0];
                for b in 0..blocks {
                    let at = g * blocks + b;
                    let w = &self.q[at * 8 * 32..(at + 1) * 8 * 32];
                    let dot: i32 = (0..QK)
                        .map(|j| {
                            i32::from(w[(j / 4) * 32 + cc * 4 + j % 4]) * i32::from(xq[b * QK + j])
                        })
                        .sum();
                    let scale = self.d[at * GROUP + cc] * x.d[row * blocks + b];
                    acc += (dot - x.s[row * blocks + b]) as f32 * scale;
                }
                out[r * os + c - c0] = acc;
            }
        }
    }
}

impl Inputs {
    /// `rows` rows of `k` values (a multiple of [`QK`]), rounded by blocks; by
    /// chunks of rows over the threads when `parallel`.
    pub fn quantise(x: &[f32], rows: usize, k: usize, parallel: bool) -> Inputs {
        debug_assert!(k.is_multiple_of(QK) && x.len() >= rows * k);
        let blocks = rows * k / QK;
        let mut q = vec![0i8; rows * k];
        let mut d = vec![0f32; blocks];
        let mut s = vec![0i32; blocks];
        let one = |((xb, qb), (d, s)): Block<'_>| (*d, *s) = block(xb, qb);
        let x = &x[..rows * k];
        if parallel {
            x.par_chunks(QK)
                .zip(q.par_chunks_mut(QK))
                .zip(d.par_iter_mut().zip(s.par_iter_mut()))
                .with_min_len(64)
                .for_each(one);
        } else {
            x.chunks(QK)
                .zip(q.chunks_mut(QK))
                .zip(d.iter_mut().zip(s.iter_mut()))
                .for_each(one);
        }
        Inputs { q, d, s, k }
    }
}

/// A block of inputs, where its bytes go, and where its scale and sum go.
type Block<'a> = ((&'a [f32], &'a mut [i8]), (&'a mut f32, &'a mut i32));

/// One block of inputs rounded into `q`: its scale and eight times its values' sum
/// (both 0 for a block of zeros, or one that is not finite).
fn block(x: &[f32], q: &mut [i8]) -> (f32, i32) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2.
        return unsafe { block_avx2(x, q) };
    }
    block_lanes(x, q)
}

/// The same with AVX2: the block as four registers, rounded to nearest (ties to
/// even, as `block_lanes`), packed to bytes.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_avx2(x: &[f32], q: &mut [i8]) -> (f32, i32) {
    use std::arch::x86_64::*;
    assert!(x.len() == QK && q.len() == QK);
    // SAFETY: 32 values are read and 32 written, as asserted.
    unsafe {
        let v: [__m256; 4] = std::array::from_fn(|i| _mm256_loadu_ps(x.as_ptr().add(8 * i)));
        let sign = _mm256_set1_ps(-0.0);
        let mut max = _mm256_setzero_ps();
        let mut odd = 0;
        for v in v {
            max = _mm256_max_ps(max, _mm256_andnot_ps(sign, v));
            odd |= _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_UNORD_Q>(v, v));
        }
        let m = _mm_max_ps(_mm256_castps256_ps128(max), _mm256_extractf128_ps::<1>(max));
        let m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        let max = _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps::<1>(m, m)));
        let inv = 127.0 / max;
        if odd != 0 || !(max > 0.0 && max.is_finite() && inv.is_finite()) {
            q.fill(0);
            return (0.0, 0);
        }
        let inv = _mm256_set1_ps(inv);
        let i: [__m256i; 4] = std::array::from_fn(|k| _mm256_cvtps_epi32(_mm256_mul_ps(v[k], inv)));
        let sum = _mm256_add_epi32(_mm256_add_epi32(i[0], i[1]), _mm256_add_epi32(i[2], i[3]));
        let sum = _mm_add_epi32(
            _mm256_castsi256_si128(sum),
            _mm256_extracti128_si256::<1>(sum),
        );
        let sum = _mm_add_epi32(sum, _mm_shuffle_epi32::<0b01_00_11_10>(sum));
        let sum = _mm_cvtsi128_si32(_mm_add_epi32(sum, _mm_shuffle_epi32::<0b10_11_00_01>(sum)));
        // Packing works within 128-bit lanes: the bytes come out as the first four
        // of each register, then the last four; one permutation restores the order.
        let bytes = _mm256_packs_epi16(
            _mm256_packs_epi32(i[0], i[1]),
            _mm256_packs_epi32(i[2], i[3]),
        );
        let bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(q.as_mut_ptr().cast(), bytes);
        (max / 127.0, 8 * sum)
    }
}

#[inline(always)]
fn block_lanes(x: &[f32], q: &mut [i8]) -> (f32, i32) {
    let max = x.iter().fold(0f32, |m, v| m.max(v.abs()));
    let inv = 127.0 / max;
    // A block of zeros, one with a value that is not finite, or one so small
    // that its scale's inverse is not: zeros (such a block adds nothing).
    if !(max > 0.0 && max.is_finite() && inv.is_finite()) || x.iter().any(|v| v.is_nan()) {
        q.fill(0);
        return (0.0, 0);
    }
    let mut sum = 0i32;
    for (q, v) in q.iter_mut().zip(x) {
        *q = (v * inv).round_ties_even() as i8;
        sum += i32::from(*q);
    }
    (max / 127.0, 8 * sum)
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{GROUP, Inputs, Packed, Part, QK};
    use std::arch::x86_64::*;

    /// Rows of a tile: four rows' 16-bit block sums and float totals (eight
    /// registers), with the weights, an input and the constants, fit the sixteen.
    const ROWS: usize = 4;

    /// # Safety
    /// The CPU has AVX2 and FMA, and `Packed::product`'s bounds hold.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn product(
        p: &Packed,
        x: &Inputs,
        part: Part,
        bias: &[f32],
        out: &mut [f32],
    ) {
        let (r0, c0, os) = (part.r0, part.c0, part.os);
        for g in c0 / GROUP..(c0 + part.n) / GROUP {
            let col = g * GROUP - c0;
            let mut r = 0;
            while r < part.rows {
                let t = (part.rows - r).min(ROWS);
                // SAFETY: rows r0+r..r0+r+t and the group's columns lie inside
                // the bounds `product` checked.
                unsafe {
                    let b = _mm256_loadu_ps(bias.as_ptr().add(col));
                    let o = out.as_mut_ptr().add(r * os + col);
                    match t {
                        4 => tile::<4>(p, x, g, r0 + r, b, o, os),
                        3 => tile::<3>(p, x, g, r0 + r, b, o, os),
                        2 => tile::<2>(p, x, g, r0 + r, b, o, os),
                        _ => tile::<1>(p, x, g, r0 + r, b, o, os),
                    }
                }
                r += t;
            }
        }
    }

    /// Rows `row..row + N` times group `g`'s eight columns, into `out` (row stride `os`).
    #[target_feature(enable = "avx2,fma")]
    #[inline]
    unsafe fn tile<const N: usize>(
        p: &Packed,
        x: &Inputs,
        g: usize,
        row: usize,
        bias: __m256,
        out: *mut f32,
        os: usize,
    ) {
        let blocks = p.inputs / QK;
        // SAFETY (whole body): see `product`.
        unsafe {
            let ones = _mm256_set1_epi16(1);
            let mut acc = [bias; N];
            let xq: [*const i8; N] = std::array::from_fn(|r| x.q.as_ptr().add((row + r) * x.k));
            let xd: [*const f32; N] = std::array::from_fn(|r| x.d.as_ptr().add((row + r) * blocks));
            let xs: [*const i32; N] = std::array::from_fn(|r| x.s.as_ptr().add((row + r) * blocks));
            let mut w = p.q.as_ptr().add(g * blocks * QK * GROUP);
            let mut wd = p.d.as_ptr().add(g * blocks * GROUP);
            for b in 0..blocks {
                let mut sums = [_mm256_setzero_si256(); N];
                for step in 0..QK / 4 {
                    let wv = _mm256_loadu_si256(w.add(step * 32).cast());
                    for r in 0..N {
                        let four = xq[r].add(b * QK + step * 4).cast::<i32>().read_unaligned();
                        let xv = _mm256_set1_epi32(four);
                        sums[r] = _mm256_add_epi16(sums[r], _mm256_maddubs_epi16(wv, xv));
                    }
                }
                let dw = _mm256_loadu_ps(wd);
                for r in 0..N {
                    let dot = _mm256_sub_epi32(
                        _mm256_madd_epi16(sums[r], ones),
                        _mm256_set1_epi32(*xs[r].add(b)),
                    );
                    let scale = _mm256_mul_ps(dw, _mm256_set1_ps(*xd[r].add(b)));
                    acc[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(dot), scale, acc[r]);
                }
                w = w.add(QK * GROUP);
                wd = wd.add(GROUP);
            }
            for (r, a) in acc.iter().enumerate() {
                _mm256_storeu_ps(out.add(r * os), *a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Q4_0 rows of `outputs × inputs` random values, and the same as floats.
    fn random(outputs: usize, inputs: usize, seed: &mut u64) -> (Vec<u8>, Vec<f32>) {
        let mut next = || {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*seed >> 33) as u32
        };
        let mut raw = Vec::new();
        let mut w = Vec::new();
        for _ in 0..outputs * inputs / QK {
            let scale = half::f16::from_f32(0.001 + (next() % 1000) as f32 / 20_000.0);
            raw.extend(scale.to_bits().to_le_bytes());
            let values: Vec<u8> = (0..QK).map(|_| (next() % 16) as u8).collect();
            raw.extend((0..16).map(|j| values[j] | (values[j + 16] << 4)));
            w.extend(
                values
                    .iter()
                    .map(|&v| (f32::from(v) - 8.0) * scale.to_f32()),
            );
        }
        (raw, w)
    }

    /// The kernel this machine runs and the plain one, on every shape the tiling
    /// meets (row tails, one row, column ranges that start inside the matrix), give
    /// the float product of the same weights within the inputs' 8-bit rounding.
    #[test]
    fn products_match_the_float_product() {
        let mut seed = 11u64;
        for (rows, inputs, outputs) in [
            (1, 32, 8),
            (3, 64, 16),
            (5, 384, 40),
            (17, 96, 24),
            (70, 160, 32),
        ] {
            let (raw, w) = random(outputs, inputs, &mut seed);
            let p = Packed::from_q4_0(&raw, outputs, inputs);
            let x: Vec<f32> = (0..rows * inputs)
                .map(|i| {
                    ((i * 7919 % 1013) as f32 / 1013.0 - 0.5) * if i % 37 == 0 { 9.0 } else { 1.0 }
                })
                .collect();
            let bias: Vec<f32> = (0..outputs).map(|c| c as f32 / 100.0).collect();
            let mut exact = vec![0f64; rows * outputs];
            for r in 0..rows {
                for c in 0..outputs {
                    exact[r * outputs + c] = f64::from(bias[c])
                        + (0..inputs)
                            .map(|k| f64::from(x[r * inputs + k]) * f64::from(w[c * inputs + k]))
                            .sum::<f64>();
                }
            }
            let scale = exact.iter().fold(0f64, |m, v| m.max(v.abs()));
            for parallel in [false, true] {
                let a = Inputs::quantise(&x, rows, inputs, parallel);
                for (c0, n) in [(0, outputs), (8, outputs - 8)] {
                    let mut fast = vec![f32::NAN; rows * n];
                    let mut plain = vec![f32::NAN; rows * n];
                    let part = Part {
                        r0: 0,
                        rows,
                        c0,
                        n,
                        os: n,
                    };
                    p.product(&a, part, &bias[c0..], &mut fast);
                    p.plain(&a, part, &bias[c0..], &mut plain);
                    for r in 0..rows {
                        for c in 0..n {
                            let (f, s, e) = (
                                fast[r * n + c],
                                plain[r * n + c],
                                exact[r * outputs + c0 + c],
                            );
                            assert!(
                                (f - s).abs() <= 1e-5 * scale as f32,
                                "{rows}×{inputs}×{outputs} at {r},{c}: kernel {f} vs plain {s}"
                            );
                            assert!(
                                ((f as f64) - e).abs() <= 0.02 * scale,
                                "{rows}×{inputs}×{outputs} at {r},{c}: {f} vs exact {e}"
                            );
                        }
                    }
                }
                // Rows from the middle of the inputs.
                if rows > 2 {
                    let mut part = vec![0f32; outputs];
                    let last = Part {
                        r0: rows - 1,
                        rows: 1,
                        c0: 0,
                        n: outputs,
                        os: outputs,
                    };
                    p.product(&a, last, &bias, &mut part);
                    for c in 0..outputs {
                        let e = exact[(rows - 1) * outputs + c];
                        assert!(((part[c] as f64) - e).abs() <= 0.02 * scale);
                    }
                }
            }
        }
    }

    /// The AVX2 rounding gives the plain loop's bytes, scale and sum.
    #[test]
    fn both_roundings_agree() {
        for seed in 0..200u32 {
            let x: Vec<f32> = (0..QK as u32)
                .map(|i| ((seed * 31 + i * 7919) % 2001) as f32 / 1000.0 - 1.0)
                .map(|v| v * (1 + seed % 7) as f32)
                .collect();
            let (mut a, mut b) = ([0i8; QK], [0i8; QK]);
            let plain = block_lanes(&x, &mut a);
            assert_eq!(block(&x, &mut b), plain);
            assert_eq!(a, b);
        }
        for odd in [f32::NAN, f32::INFINITY, 1e-38] {
            let mut q = [1i8; QK];
            let mut x = [if odd == 1e-38 { 1e-39 } else { 0.5 }; QK];
            x[3] = odd;
            assert_eq!(block(&x, &mut q), (0.0, 0), "{odd}");
            assert_eq!(q, [0; QK]);
            let mut q = [1i8; QK];
            assert_eq!(block_lanes(&x, &mut q), (0.0, 0), "{odd}");
            assert_eq!(q, [0; QK]);
        }
    }

    #[test]
    fn inputs_round_to_eight_bits_a_block() {
        let mut x = vec![0f32; 64];
        x[0] = 2.54;
        x[1] = -1.27;
        x[2] = 0.005;
        // The second block is all zeros: scale 0, no values.
        let a = Inputs::quantise(&x, 1, 64, false);
        assert_eq!(&a.q[..3], &[127, -64, 0]);
        assert!((a.d[0] - 0.02).abs() < 1e-7);
        assert_eq!(a.s[0], 8 * 63);
        assert_eq!((a.d[1], a.s[1]), (0.0, 0));
        assert!(a.q[32..].iter().all(|&v| v == 0));
    }
}

//! The BERT encoder (post-norm layers, exact GELU) run on plain `f32` buffers, for
//! both in-process models.
//!
//! Why not a tensor library: a question is about fifteen tokens, and at that size a
//! general matrix product spends most of its time packing the weight matrix it is
//! about to read once (candle's `gemm` spent 62 % of a query's time packing, 11 %
//! multiplying). Here every weight matrix is transposed once at load, to `[in][out]`,
//! so a product streams each weight row once per block of output columns, with no
//! copy; the tokens of every text of a batch share each product, and attention runs
//! per text over its own tokens, so nothing is padded. Large products (a batch of
//! long episodes) are split by rows over the machine's threads, a question's by
//! column blocks, and a single text's attention by heads.
//!
//! The kernel is written once in plain Rust and compiled three times — for AVX-512,
//! for AVX2 with FMA, and without either — and the machine's best is chosen at run
//! time. Results agree with the float64 reference of `tests/minilm.rs` within 1e-4
//! and with the e5 package's own engine (`tests/e5.rs`), as candle's did.

use rayon::prelude::*;

use crate::q4::{self, Inputs, Packed, Part};

/// Products of at least this many tokens are split over the threads by rows; smaller
/// ones (a question's) by columns, when large enough ([`PARALLEL_MACS`]).
const PARALLEL_ROWS: usize = 64;

/// A product of fewer rows is split over the threads by columns when it has at least
/// this many multiply-adds (a question's projections have 2–9 million, ~50–200 µs of
/// one core, well above what handing work to another thread costs).
const PARALLEL_MACS: usize = 1 << 20;

/// `x · W + b`. Float weights (MiniLM's) are held packed: for each block of [`BLOCK`]
/// output columns, its `inputs × BLOCK` weights one after another (the last block
/// padded with zeros), so a product reads the weights in the order they lie in memory;
/// and as IEEE half floats, so a question's pass reads 21 MB of weights, not 42 (it
/// was bound by reading them). Sums are single floats; a half keeps 11 significant
/// bits of a weight. The e5 file's 4-bit weights are kept as they are ([`crate::q4`]).
pub(crate) struct Linear {
    w: Weights,
    b: Vec<f32>,
    inputs: usize,
    outputs: usize,
}

/// A product's weights: halves packed by column blocks, or the e5 file's own
/// 4-bit values computed in integers ([`crate::q4`]).
enum Weights {
    Half(Vec<u16>),
    Q4(Packed),
}

/// Output columns per packed block (two AVX-512 registers).
const BLOCK: usize = 32;

/// `[rows][cols]` → `[cols][rows]`.
pub(crate) fn transpose(w: &[f32], rows: usize, cols: usize) -> Vec<f32> {
    let mut t = vec![0f32; w.len()];
    for r in 0..rows {
        for c in 0..cols {
            t[c * rows + r] = w[r * cols + c];
        }
    }
    t
}

/// `[in][out]` weights, packed by column blocks, as halves.
fn pack(w: &[f32], inputs: usize, outputs: usize) -> Vec<u16> {
    let blocks = outputs.div_ceil(BLOCK);
    let mut packed = vec![0u16; blocks * inputs * BLOCK];
    for blk in 0..blocks {
        let c0 = blk * BLOCK;
        let cols = (outputs - c0).min(BLOCK);
        for i in 0..inputs {
            let to = (blk * inputs + i) * BLOCK;
            for (t, &v) in packed[to..to + cols]
                .iter_mut()
                .zip(&w[i * outputs + c0..i * outputs + c0 + cols])
            {
                *t = half::f16::from_f32(v).to_bits();
            }
        }
    }
    packed
}

impl Linear {
    /// From PyTorch's layout, `[out][in]` (what safetensors files hold).
    pub fn from_out_in(w: &[f32], b: Vec<f32>, outputs: usize, inputs: usize) -> Linear {
        Linear::from_in_out(&transpose(w, outputs, inputs), b, inputs, outputs)
    }

    /// From `[in][out]`.
    pub fn from_in_out(w: &[f32], b: Vec<f32>, inputs: usize, outputs: usize) -> Linear {
        Linear {
            w: Weights::Half(pack(w, inputs, outputs)),
            b,
            inputs,
            outputs,
        }
    }

    /// From 4-bit Q4_0 rows in PyTorch's `[out][in]` layout, kept as they are
    /// ([`crate::q4`]); `None` when the sizes are not whole blocks and groups.
    pub fn from_q4_0(raw: &[u8], b: Vec<f32>, outputs: usize, inputs: usize) -> Option<Linear> {
        let whole = q4::fits(inputs, outputs)
            && b.len() == outputs
            && raw.len() == outputs * inputs / q4::QK * q4::BLOCK_BYTES;
        whole.then(|| Linear {
            w: Weights::Q4(Packed::from_q4_0(raw, outputs, inputs)),
            b,
            inputs,
            outputs,
        })
    }

    /// Several products of the same input side by side: one pass over the input
    /// serves all (the query, key and value projections).
    /// The parts are given as `[in][out]` weights with their biases.
    pub fn concat(parts: &[(Vec<f32>, Vec<f32>, usize)], inputs: usize) -> Linear {
        let outputs: usize = parts.iter().map(|p| p.2).sum();
        let mut w = Vec::with_capacity(inputs * outputs);
        for i in 0..inputs {
            for (pw, _, n) in parts {
                w.extend_from_slice(&pw[i * n..(i + 1) * n]);
            }
        }
        let b = parts.iter().flat_map(|p| p.1.iter().copied()).collect();
        Linear::from_in_out(&w, b, inputs, outputs)
    }

    #[cfg(test)]
    fn apply(&self, x: &[f32], rows: usize) -> Vec<f32> {
        let mut out = Vec::new();
        self.apply_into(x, rows, &mut out);
        out
    }

    /// `x · w + b` for `rows` rows into `out`, which is resized to hold them.
    /// Every element is written, so a buffer reused at the same size is not
    /// cleared first (clearing it, on the caller's thread, was serial work
    /// beside the threaded products).
    fn apply_into(&self, x: &[f32], rows: usize, out: &mut Vec<f32>) {
        self.apply_then(x, rows, out, |_| {});
    }

    /// The same, then `then` on each part of the output as soon as its thread has
    /// computed it (the GELU after `up`: on a question's column parts it runs on
    /// every thread, not after them on one). `then` must work element by element.
    fn apply_then(
        &self,
        x: &[f32],
        rows: usize,
        out: &mut Vec<f32>,
        then: impl Fn(&mut [f32]) + Sync,
    ) {
        sized(out, rows * self.outputs);
        let k = self.inputs;
        let then = &then;
        match &self.w {
            Weights::Half(w) => self.split(rows, out, then, |p: Part, o| {
                let m = Mat {
                    x: &x[p.r0 * k..],
                    xs: k,
                    k,
                    w: W::Packed(&w[(p.c0 / BLOCK) * k * BLOCK..]),
                    n: p.n,
                    bias: Some(&self.b[p.c0..]),
                };
                matmul(&m, p.rows, o, p.os);
            }),
            Weights::Q4(w) => {
                let q = Inputs::quantise(x, rows, k, split_by_rows(rows));
                self.split(rows, out, then, |p: Part, o| {
                    w.product(&q, p, &self.b[p.c0..], o)
                });
            }
        }
    }

    /// Computes the `rows × outputs` product into `out` through `part(p, out)`,
    /// which fills the rows and columns `p` names (`p.c0` a multiple of
    /// [`BLOCK`]) into `out` with row stride `p.os`: by chunks of rows over the
    /// threads for a batch; by column blocks for a few rows (a question) when the
    /// product is large enough, each thread into its own buffer; else at once.
    /// `then` runs on each filled part, on the thread that filled it.
    fn split(
        &self,
        rows: usize,
        out: &mut [f32],
        then: &(impl Fn(&mut [f32]) + Sync),
        part: impl Fn(Part, &mut [f32]) + Sync,
    ) {
        let width = self.outputs;
        if split_by_rows(rows) {
            by_rows(out, width, |o, r0| {
                part(Part::every_column(r0, o.len() / width, width), o);
                then(o);
            });
        } else if rows * self.inputs * width >= PARALLEL_MACS
            && width >= 2 * BLOCK
            && rayon::current_num_threads() > 1
        {
            let blocks = width.div_ceil(BLOCK);
            let per = blocks.div_ceil(rayon::current_num_threads());
            let parts: Vec<(usize, usize, Vec<f32>)> = (0..blocks.div_ceil(per))
                .into_par_iter()
                .map(|t| {
                    let c0 = t * per * BLOCK;
                    let n = ((t + 1) * per * BLOCK).min(width) - c0;
                    let mut o = vec![0f32; rows * n];
                    part(
                        Part {
                            r0: 0,
                            rows,
                            c0,
                            n,
                            os: n,
                        },
                        &mut o,
                    );
                    then(&mut o);
                    (c0, n, o)
                })
                .collect();
            for (c0, n, o) in parts {
                for (r, row) in o.chunks_exact(n).enumerate() {
                    out[r * width + c0..r * width + c0 + n].copy_from_slice(row);
                }
            }
        } else {
            part(Part::every_column(0, rows, width), out);
            then(out);
        }
    }
}

/// Makes `buf` hold `len` elements, keeping what it holds when it already
/// does: the caller overwrites every element.
fn sized(buf: &mut Vec<f32>, len: usize) {
    if buf.len() != len {
        buf.clear();
        buf.resize(len, 0.0);
    }
}

/// A layer norm's scale and shift.
pub(crate) struct Norm {
    pub w: Vec<f32>,
    pub b: Vec<f32>,
}

/// One post-norm transformer layer.
pub(crate) struct Layer {
    /// Query, key and value projections side by side.
    pub qkv: Linear,
    pub attn_out: Linear,
    pub attn_norm: Norm,
    pub up: Linear,
    pub down: Linear,
    pub out_norm: Norm,
}

pub(crate) struct Encoder {
    pub hidden: usize,
    pub heads: usize,
    pub eps: f32,
    pub embed_norm: Norm,
    pub layers: Vec<Layer>,
}

impl Encoder {
    /// The mean of the last hidden states of each text. `x` holds every text's
    /// input rows (word + position + type embedding, before the first norm) one
    /// after another; `lens` says how many rows each text has. The means are not
    /// normalised.
    pub fn mean_pooled(&self, x: Vec<f32>, lens: &[usize]) -> Vec<Vec<f32>> {
        // On a thread of the pool: the products' parallel parts are then handed
        // to the other threads from inside it, where a caller outside the pool
        // sleeps until each product is done and is woken again (a question has
        // 24 products; those wake-ups were a quarter of its time).
        if rayon::current_thread_index().is_none() && rayon::current_num_threads() > 1 {
            return rayon::scope(|_| self.pooled(x, lens));
        }
        self.pooled(x, lens)
    }

    /// The multiply-adds of one text of `tokens` rows through every layer: the
    /// four products a token, and attention's two (`Q·Kᵀ`, then the weights
    /// times `V`), which grow with the square of the text. What a pass cannot do
    /// with fewer, whatever the machine.
    pub fn multiply_adds(&self, tokens: usize) -> u64 {
        let (n, h) = (tokens as u64, self.hidden as u64);
        self.layers
            .iter()
            .map(|l| {
                let per_token: u64 = [&l.qkv, &l.attn_out, &l.up, &l.down]
                    .iter()
                    .map(|p| (p.inputs * p.outputs) as u64)
                    .sum();
                n * per_token + 2 * n * n * h
            })
            .sum()
    }

    fn pooled(&self, mut x: Vec<f32>, lens: &[usize]) -> Vec<Vec<f32>> {
        let h = self.hidden;
        let rows: usize = lens.iter().sum();
        debug_assert_eq!(x.len(), rows * h);
        by_rows(&mut x, h, |part, _| {
            add_norm(part, None, &self.embed_norm, h, self.eps)
        });
        // The residual sums and norms run by rows over the threads too (a
        // batch's, serial, were a tenth of an import's time with one core idle);
        // the GELU runs on each part of `up` where it was computed.
        let residual = |x: &mut [f32], y: &[f32], n: &Norm| {
            by_rows(x, h, |part, r0| {
                add_norm(part, Some(&y[r0 * h..r0 * h + part.len()]), n, h, self.eps);
            });
        };
        // Each product's output, reused by every layer.
        let (mut qkv, mut ctx, mut a, mut mid, mut d) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for l in &self.layers {
            l.qkv.apply_into(&x, rows, &mut qkv);
            self.attention(&qkv, lens, &mut ctx);
            l.attn_out.apply_into(&ctx, rows, &mut a);
            residual(&mut x, &a, &l.attn_norm);
            l.up.apply_then(&x, rows, &mut mid, gelu);
            l.down.apply_into(&mid, rows, &mut d);
            residual(&mut x, &d, &l.out_norm);
        }
        let mut out = Vec::with_capacity(lens.len());
        let mut at = 0;
        for &len in lens {
            let mut v = vec![0f32; h];
            for r in at..at + len {
                add(&mut v, &x[r * h..(r + 1) * h]);
            }
            let n = len.max(1) as f32;
            v.iter_mut().for_each(|e| *e /= n);
            out.push(v);
            at += len;
        }
        out
    }

    /// Scaled dot-product attention of each text over its own tokens, every head;
    /// `qkv` rows are `[q | k | v]`. Writes the heads' outputs side by side
    /// into `ctx` (every element).
    fn attention(&self, qkv: &[f32], lens: &[usize], ctx: &mut Vec<f32>) {
        let h = self.hidden;
        let rows: usize = lens.iter().sum();
        sized(ctx, rows * h);
        // Each text's rows of the output, to fill independently.
        let mut parts = Vec::with_capacity(lens.len());
        let (mut rest, mut at) = (ctx.as_mut_slice(), 0);
        for &len in lens {
            let (mine, more) = rest.split_at_mut(len * h);
            parts.push((at, len, mine));
            rest = more;
            at += len;
        }
        if rows >= PARALLEL_ROWS && lens.len() > 1 {
            parts
                .into_par_iter()
                .for_each(|(at, len, out)| self.attend(qkv, at, len, 0..self.heads, out, h));
        } else if lens.len() == 1 && self.heads > 1 && rayon::current_num_threads() > 1 {
            // One text (a question): its heads in two halves, one on each of two
            // threads; the second half's into a buffer of its own, copied in after.
            let hd = h / self.heads;
            let half = self.heads / 2;
            let (first, second) = (half * hd, (self.heads - half) * hd);
            let mut theirs = vec![0f32; rows * second];
            rayon::join(
                || self.attend(qkv, 0, rows, 0..half, ctx, h),
                || self.attend(qkv, 0, rows, half..self.heads, &mut theirs, second),
            );
            for (row, part) in ctx.chunks_exact_mut(h).zip(theirs.chunks_exact(second)) {
                row[first..].copy_from_slice(part);
            }
        } else {
            for (at, len, out) in parts {
                self.attend(qkv, at, len, 0..self.heads, out, h);
            }
        }
    }

    /// Attention of `heads` over one text (`len` rows from row `at`): each head's
    /// outputs side by side, the first head's at column 0 of `out`, whose rows are
    /// `os` wide.
    fn attend(
        &self,
        qkv: &[f32],
        at: usize,
        len: usize,
        heads: std::ops::Range<usize>,
        out: &mut [f32],
        os: usize,
    ) {
        let h = self.hidden;
        let hd = h / self.heads;
        let stride = 3 * h;
        let scale = 1.0 / (hd as f32).sqrt();
        let q = &qkv[at * stride..(at + len) * stride];
        let mut kt = vec![0f32; hd * len];
        let mut scores = vec![0f32; len * len];
        let first = heads.start;
        for head in heads {
            let (qo, ko, vo) = (head * hd, h + head * hd, 2 * h + head * hd);
            // Kᵀ of this head, [hd][len], so that Q·Kᵀ is a product like the others.
            for t in 0..len {
                for d in 0..hd {
                    kt[d * len + t] = q[t * stride + ko + d];
                }
            }
            matmul(
                &Mat {
                    x: &q[qo..],
                    xs: stride,
                    k: hd,
                    w: W::Stride(&kt, len),
                    n: len,
                    bias: None,
                },
                len,
                &mut scores,
                len,
            );
            for row in scores.chunks_exact_mut(len) {
                softmax(row, scale);
            }
            matmul(
                &Mat {
                    x: &scores,
                    xs: len,
                    k: len,
                    w: W::Stride(&q[vo..], stride),
                    n: hd,
                    bias: None,
                },
                len,
                &mut out[(head - first) * hd..],
                os,
            );
        }
    }
}

/// One product's operands: `x` is `rows × k` with row stride `xs`, `w` is `k × n`;
/// `bias`, when given, has `n` entries.
#[derive(Clone, Copy)]
struct Mat<'a> {
    x: &'a [f32],
    xs: usize,
    k: usize,
    w: W<'a>,
    n: usize,
    bias: Option<&'a [f32]>,
}

/// A product's weights.
#[derive(Clone, Copy)]
enum W<'a> {
    /// Row-major single floats with this row stride (attention's operands).
    Stride(&'a [f32], usize),
    /// Halves packed by column blocks ([`pack`]).
    Packed(&'a [u16]),
}

/// `out = x · w (+ bias)` for `rows` rows; `out` has row stride `os`.
fn matmul(m: &Mat<'_>, rows: usize, out: &mut [f32], os: usize) {
    if rows == 0 || m.n == 0 {
        return;
    }
    // What the kernels index, checked once: they read and write by pointer.
    assert!(m.x.len() >= (rows - 1) * m.xs + m.k, "x too short");
    match m.w {
        W::Stride(w, s) => assert!(m.k == 0 || w.len() >= (m.k - 1) * s + m.n, "w too short"),
        W::Packed(w) => assert!(w.len() >= m.n.div_ceil(BLOCK) * m.k * BLOCK, "w too short"),
    }
    assert!(out.len() >= (rows - 1) * os + m.n, "out too short");
    assert!(m.bias.is_none_or(|b| b.len() >= m.n), "bias too short");
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F; the bounds were checked above.
            return unsafe { avx512::matmul(m, rows, out, os) };
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("f16c")
        {
            // SAFETY: the CPU has AVX2, FMA and F16C; the bounds were checked above.
            return unsafe { avx2::matmul(m, rows, out, os) };
        }
    }
    plain(m, rows, out, os)
}

/// Row by row, each weight row added in scaled.
fn plain(m: &Mat<'_>, rows: usize, out: &mut [f32], os: usize) {
    let n = m.n;
    for r in 0..rows {
        let o = &mut out[r * os..r * os + n];
        match m.bias {
            Some(b) => o.copy_from_slice(&b[..n]),
            None => o.fill(0.0),
        }
        let x = &m.x[r * m.xs..r * m.xs + m.k];
        for (p, &a) in x.iter().enumerate() {
            match m.w {
                W::Stride(w, s) => {
                    for (o, &w) in o.iter_mut().zip(&w[p * s..p * s + n]) {
                        *o += a * w;
                    }
                }
                W::Packed(w) => {
                    for (c, o) in o.iter_mut().enumerate() {
                        let at = ((c / BLOCK) * m.k + p) * BLOCK + c % BLOCK;
                        *o += a * half::f16::from_bits(w[at]).to_f32();
                    }
                }
            }
        }
    }
}

/// The tiling both vector kernels share: column blocks of [`BLOCK`] outermost, so a
/// block of the weights (`k × 32`) stays in cache while every block of `$rows` rows
/// passes over it; `$tile::<R>` computes one `R × 32` tile.
macro_rules! tiled {
    ($m:expr, $rows:expr, $out:expr, $os:expr, $r:expr, $tile:ident) => {{
        let m = $m;
        let mut c0 = 0;
        while c0 < m.n {
            let cols = (m.n - c0).min(BLOCK);
            let mut r0 = 0;
            while r0 < $rows {
                let r = ($rows - r0).min($r);
                // SAFETY: rows r0..r0+r and columns c0..c0+cols lie inside the bounds
                // `matmul` checked; lanes past `cols` are neither read nor written.
                unsafe {
                    match r {
                        8 => $tile::<8>(m, r0, c0, cols, $out, $os),
                        7 => $tile::<7>(m, r0, c0, cols, $out, $os),
                        6 => $tile::<6>(m, r0, c0, cols, $out, $os),
                        5 => $tile::<5>(m, r0, c0, cols, $out, $os),
                        4 => $tile::<4>(m, r0, c0, cols, $out, $os),
                        3 => $tile::<3>(m, r0, c0, cols, $out, $os),
                        2 => $tile::<2>(m, r0, c0, cols, $out, $os),
                        _ => $tile::<1>(m, r0, c0, cols, $out, $os),
                    }
                }
                r0 += r;
            }
            c0 += cols;
        }
    }};
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{BLOCK, Mat, W};
    use std::arch::x86_64::*;

    /// Rows of a tile: eight rows of two registers, sixteen independent sums, so
    /// each block of weights read and widened from halves serves sixteen
    /// multiply-adds (six rows, twelve, left more of the time to the widening;
    /// twelve rows were no faster than eight).
    const ROWS: usize = 8;

    /// # Safety
    /// The CPU has AVX-512F, and `matmul`'s bounds hold.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn matmul(m: &Mat<'_>, rows: usize, out: &mut [f32], os: usize) {
        tiled!(m, rows, out, os, ROWS, tile)
    }

    fn mask(lanes: usize) -> __mmask16 {
        if lanes >= 16 {
            0xFFFF
        } else {
            ((1u32 << lanes) - 1) as __mmask16
        }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn tile<const N: usize>(
        m: &Mat<'_>,
        r0: usize,
        c0: usize,
        cols: usize,
        out: &mut [f32],
        os: usize,
    ) {
        let (lo, hi) = (mask(cols.min(16)), mask(cols.saturating_sub(16)));
        // SAFETY (whole body): see `tiled!`.
        unsafe {
            let (b0, b1) = match m.bias {
                Some(b) => (
                    _mm512_maskz_loadu_ps(lo, b.as_ptr().add(c0)),
                    _mm512_maskz_loadu_ps(hi, b.as_ptr().add(c0 + 16)),
                ),
                None => (_mm512_setzero_ps(), _mm512_setzero_ps()),
            };
            let mut acc = [[b0, b1]; N];
            let x: [*const f32; N] = std::array::from_fn(|r| m.x.as_ptr().add((r0 + r) * m.xs));
            macro_rules! step {
                ($p:expr, $w0:expr, $w1:expr) => {
                    for r in 0..N {
                        let a = _mm512_set1_ps(*x[r].add($p));
                        acc[r][0] = _mm512_fmadd_ps(a, $w0, acc[r][0]);
                        acc[r][1] = _mm512_fmadd_ps(a, $w1, acc[r][1]);
                    }
                };
            }
            match m.w {
                W::Packed(w) => {
                    // Padded to whole blocks: no mask needed to read.
                    let mut w = w.as_ptr().add((c0 / BLOCK) * m.k * BLOCK);
                    for p in 0..m.k {
                        let w0 = _mm512_cvtph_ps(_mm256_loadu_si256(w.cast()));
                        let w1 = _mm512_cvtph_ps(_mm256_loadu_si256(w.add(16).cast()));
                        step!(p, w0, w1);
                        w = w.add(BLOCK);
                    }
                }
                W::Stride(w, s) => {
                    let mut w = w.as_ptr().add(c0);
                    for p in 0..m.k {
                        let w0 = _mm512_maskz_loadu_ps(lo, w);
                        let w1 = _mm512_maskz_loadu_ps(hi, w.add(16));
                        step!(p, w0, w1);
                        w = w.add(s);
                    }
                }
            }
            for (r, a) in acc.iter().enumerate() {
                let o = out.as_mut_ptr().add((r0 + r) * os + c0);
                _mm512_mask_storeu_ps(o, lo, a[0]);
                _mm512_mask_storeu_ps(o.add(16), hi, a[1]);
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{BLOCK, Mat, W};
    use std::arch::x86_64::*;

    /// Columns a pass of the AVX2 tile covers: half a packed block, two registers.
    const HALF: usize = BLOCK / 2;

    /// # Safety
    /// The CPU has AVX2, FMA and F16C, and `matmul`'s bounds hold.
    #[target_feature(enable = "avx2,fma,f16c")]
    pub(super) unsafe fn matmul(m: &Mat<'_>, rows: usize, out: &mut [f32], os: usize) {
        // Four rows of two registers, a block in two halves: eight sums, two weight
        // registers and one broadcast input of the sixteen. Three rows of a whole
        // block (twelve sums) left too few for the weights, and the compiler kept a
        // sum on the stack, storing and reloading it on every step.
        tiled!(m, rows, out, os, 4, tile)
    }

    #[target_feature(enable = "avx2,fma,f16c")]
    #[inline]
    unsafe fn tile<const N: usize>(
        m: &Mat<'_>,
        r0: usize,
        c0: usize,
        cols: usize,
        out: &mut [f32],
        os: usize,
    ) {
        // SAFETY (whole body): see `tiled!`; partial blocks go through a buffer.
        unsafe {
            let x: [*const f32; N] = std::array::from_fn(|r| m.x.as_ptr().add((r0 + r) * m.xs));
            for h in 0..cols.div_ceil(HALF) {
                let (h0, hcols) = (h * HALF, (cols - h * HALF).min(HALF));
                let mut acc = [[_mm256_setzero_ps(); 2]; N];
                if let Some(b) = m.bias {
                    let mut buf = [0f32; HALF];
                    buf[..hcols].copy_from_slice(&b[c0 + h0..c0 + h0 + hcols]);
                    let v: [__m256; 2] =
                        std::array::from_fn(|i| _mm256_loadu_ps(buf.as_ptr().add(8 * i)));
                    acc = [v; N];
                }
                macro_rules! step {
                    ($p:expr, $w0:expr, $w1:expr) => {
                        let (w0, w1) = ($w0, $w1);
                        for r in 0..N {
                            let a = _mm256_broadcast_ss(&*x[r].add($p));
                            acc[r][0] = _mm256_fmadd_ps(a, w0, acc[r][0]);
                            acc[r][1] = _mm256_fmadd_ps(a, w1, acc[r][1]);
                        }
                    };
                }
                match m.w {
                    W::Packed(w) => {
                        let mut at = w.as_ptr().add((c0 / BLOCK) * m.k * BLOCK + h0);
                        for p in 0..m.k {
                            step!(
                                p,
                                _mm256_cvtph_ps(_mm_loadu_si128(at.cast())),
                                _mm256_cvtph_ps(_mm_loadu_si128(at.add(8).cast()))
                            );
                            at = at.add(BLOCK);
                        }
                    }
                    W::Stride(w, s) if hcols == HALF => {
                        for p in 0..m.k {
                            let at = w.as_ptr().add(p * s + c0 + h0);
                            step!(p, _mm256_loadu_ps(at), _mm256_loadu_ps(at.add(8)));
                        }
                    }
                    W::Stride(w, s) => {
                        let mut buf = [0f32; HALF];
                        for p in 0..m.k {
                            let at = p * s + c0 + h0;
                            buf[..hcols].copy_from_slice(&w[at..at + hcols]);
                            step!(
                                p,
                                _mm256_loadu_ps(buf.as_ptr()),
                                _mm256_loadu_ps(buf.as_ptr().add(8))
                            );
                        }
                    }
                }
                for (r, a) in acc.iter().enumerate() {
                    let mut buf = [0f32; HALF];
                    _mm256_storeu_ps(buf.as_mut_ptr(), a[0]);
                    _mm256_storeu_ps(buf.as_mut_ptr().add(8), a[1]);
                    let o = (r0 + r) * os + c0 + h0;
                    out[o..o + hcols].copy_from_slice(&buf[..hcols]);
                }
            }
        }
    }
}

/// Whether work over `rows` rows is split by rows over the threads ([`by_rows`]).
fn split_by_rows(rows: usize) -> bool {
    rows >= PARALLEL_ROWS && rayon::current_num_threads() > 1
}

/// Runs `f` on `x`, rows of `width` one after another, by chunks of whole rows
/// over the threads when there are at least [`PARALLEL_ROWS`] (a batch), else on
/// all of it at once (a question: handing work over would cost more than it
/// saves). `f` gets a chunk and the index of its first row. Each row is computed as
/// it would be alone, so the result does not depend on the split.
fn by_rows(x: &mut [f32], width: usize, f: impl Fn(&mut [f32], usize) + Sync) {
    let rows = x.len() / width.max(1);
    if split_by_rows(rows) {
        let chunk = rows.div_ceil(rayon::current_num_threads() * 4).max(8);
        x.par_chunks_mut(chunk * width)
            .enumerate()
            .for_each(|(c, part)| f(part, c * chunk));
    } else {
        f(x, 0);
    }
}

#[inline(always)]
fn add(x: &mut [f32], y: &[f32]) {
    for (a, b) in x.iter_mut().zip(y) {
        *a += b;
    }
}

/// `y` added to `x` (when given), then each row of `x` (width `h`) normalised to
/// mean 0 and variance 1, scaled and shifted. The addition and the scaling run
/// 256 bits wide where the machine has AVX2, 512 where it has AVX-512 (the same
/// operations in the same order, so the same result as the portable loop); a
/// question's norms run on one thread, between its products, so their width is
/// its time. The mean and variance stay one running sum each, in order: sixteen
/// lane sums were faster still, but moved every vector in its last bits.
fn add_norm(x: &mut [f32], y: Option<&[f32]>, n: &Norm, h: usize, eps: f32) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { add_norm_avx512(x, y, n, h, eps) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { add_norm_avx2(x, y, n, h, eps) };
        }
    }
    add_norm_lanes(x, y, n, h, eps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn add_norm_avx512(x: &mut [f32], y: Option<&[f32]>, n: &Norm, h: usize, eps: f32) {
    add_norm_lanes(x, y, n, h, eps)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn add_norm_avx2(x: &mut [f32], y: Option<&[f32]>, n: &Norm, h: usize, eps: f32) {
    add_norm_lanes(x, y, n, h, eps)
}

#[inline(always)]
fn add_norm_lanes(x: &mut [f32], y: Option<&[f32]>, n: &Norm, h: usize, eps: f32) {
    if let Some(y) = y {
        add(x, y);
    }
    for row in x.chunks_exact_mut(h) {
        let mean = row.iter().sum::<f32>() / h as f32;
        let var = row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / h as f32;
        let inv = 1.0 / (var + eps).sqrt();
        for ((v, w), b) in row.iter_mut().zip(&n.w).zip(&n.b) {
            *v = (*v - mean) * inv * w + b;
        }
    }
}

/// Softmax of `scale · row`, in place.
fn softmax(row: &mut [f32], scale: f32) {
    let max = row.iter().fold(f32::NEG_INFINITY, |m, &v| m.max(v * scale));
    let mut sum = 0.0;
    for v in row.iter_mut() {
        *v = (*v * scale - max).exp();
        sum += *v;
    }
    row.iter_mut().for_each(|v| *v /= sum);
}

/// The exact GELU, x · Φ(x), as BERT was trained with (not the tanh approximation).
/// Sixteen lanes wide where the machine has AVX-512, eight where it has AVX2 (the
/// same operations on each element, so the same result as the portable loop).
fn gelu(x: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { gelu_avx512(x) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { gelu_avx2(x) };
        }
    }
    gelu_lanes(x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gelu_avx512(x: &mut [f32]) {
    gelu_lanes(x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gelu_avx2(x: &mut [f32]) {
    gelu_lanes(x)
}

#[inline(always)]
fn gelu_lanes(x: &mut [f32]) {
    for v in x.iter_mut() {
        *v = 0.5 * *v * (1.0 + erf(*v * std::f32::consts::FRAC_1_SQRT_2));
    }
}

/// erf(x) as a rational function of x on [−4, 4] (where erf reaches ±1 in single
/// floats), the approximation Eigen and XLA use for float32: within 5e-7 of erf
/// everywhere (`erf_is_close_to_libm`). `libm::erff` was 11–15 % of an embedding's time
/// on a machine without AVX-512: its branches keep the GELU loop scalar; this one
/// vectorises.
#[inline(always)]
fn erf(x: f32) -> f32 {
    const ALPHA: [f32; 7] = [
        -2.726_142_3e-10,
        2.770_681_4e-8,
        -2.101_024e-6,
        -5.692_506_4e-5,
        -7.349_906_3e-4,
        -2.954_6e-3,
        -1.609_603_3e-2,
    ];
    const BETA: [f32; 5] = [
        -1.456_607_2e-5,
        -2.133_740_6e-4,
        -1.682_827e-3,
        -7.373_329e-3,
        -1.426_474e-2,
    ];
    let x = x.clamp(-4.0, 4.0);
    let x2 = x * x;
    let p = ALPHA[1..].iter().fold(ALPHA[0], |p, &a| p * x2 + a) * x;
    let q = BETA[1..].iter().fold(BETA[0], |q, &b| q * x2 + b);
    p / q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[f32], rows: usize, k: usize, w: &[f32], n: usize, b: &[f32]) -> Vec<f32> {
        let mut out = vec![0f32; rows * n];
        for r in 0..rows {
            for c in 0..n {
                let mut s = b[c] as f64;
                for p in 0..k {
                    s += x[r * k + p] as f64 * w[p * n + c] as f64;
                }
                out[r * n + c] = s as f32;
            }
        }
        out
    }

    /// Every kernel this machine can run (and the plain one), on every shape the
    /// blocking can meet — row and column tails, one row, many rows over threads,
    /// packed halves and strided floats — gives the plain float64 product of the
    /// same (half-rounded) weights.
    #[test]
    fn every_kernel_gives_the_plain_product() {
        let mut seed = 7u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
        };
        type Kernel = fn(&Mat<'_>, usize, &mut [f32], usize);
        let mut kernels: Vec<(&str, Kernel)> = vec![("plain", plain), ("dispatched", matmul)];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                kernels.push(("avx512", |m, r, o, s| unsafe { avx512::matmul(m, r, o, s) }));
            }
            if std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("fma")
                && std::arch::is_x86_feature_detected!("f16c")
            {
                kernels.push(("avx2", |m, r, o, s| unsafe { avx2::matmul(m, r, o, s) }));
            }
        }
        for (rows, k, n) in [
            (1, 3, 1),
            (3, 17, 33),
            (4, 32, 32),
            (15, 384, 1152),
            (7, 5, 70),
            (130, 40, 96),
        ] {
            let x: Vec<f32> = (0..rows * k).map(|_| next()).collect();
            let w: Vec<f32> = (0..k * n).map(|_| next()).collect();
            let b: Vec<f32> = (0..n).map(|_| next()).collect();
            let halved: Vec<f32> = w.iter().map(|&v| half::f16::from_f32(v).to_f32()).collect();
            let want = naive(&x, rows, k, &halved, n, &b);
            let close = |got: &[f32], what: &str| {
                for (g, e) in got.iter().zip(&want) {
                    assert!((g - e).abs() < 1e-4, "{what} {rows}×{k}×{n}: {g} vs {e}");
                }
            };
            close(
                &Linear::from_in_out(&w, b.clone(), k, n).apply(&x, rows),
                "linear",
            );
            let packed = pack(&w, k, n);
            for (name, kernel) in &kernels {
                for (what, weights) in [
                    ("packed", W::Packed(&packed)),
                    ("strided", W::Stride(&halved, n)),
                ] {
                    let mut out = vec![0f32; rows * n];
                    let m = Mat {
                        x: &x,
                        xs: k,
                        k,
                        w: weights,
                        n,
                        bias: Some(&b),
                    };
                    kernel(&m, rows, &mut out, n);
                    close(&out, &format!("{name} {what}"));
                }
            }
        }
    }

    #[test]
    fn erf_is_close_to_libm() {
        let mut worst = 0f32;
        for i in -80_000..=80_000 {
            let x = i as f32 / 10_000.0;
            worst = worst.max((erf(x) - libm::erff(x)).abs());
        }
        assert!(worst < 1e-6, "erf differs from libm by {worst}");
        assert!(erf(f32::NAN).is_nan(), "NaN stays NaN");
    }

    /// Whether two results hold the same values, to the bit.
    fn same_bits(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
    }

    /// A single text's attention, its heads in two halves on two threads, gives
    /// the bits of all heads in one pass on one thread; so do the products with
    /// a GELU after them, split by columns (a few rows) or by rows (a batch).
    #[test]
    fn a_question_split_over_threads_gives_the_serial_result() {
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        // An even and an odd number of heads (halves of 2 and 2, of 1 and 2).
        for (h, heads, rows) in [(64, 4, 1), (64, 4, 5), (64, 4, 13), (48, 3, 1), (48, 3, 7)] {
            let enc = Encoder {
                hidden: h,
                heads,
                eps: 1e-12,
                embed_norm: Norm {
                    w: vec![1.0; h],
                    b: vec![0.0; h],
                },
                layers: Vec::new(),
            };
            let qkv: Vec<f32> = (0..rows * 3 * h)
                .map(|i| ((i * 7919) % 1009) as f32 / 500.0 - 1.0)
                .collect();
            let mut serial = vec![f32::NAN; rows * h];
            enc.attend(&qkv, 0, rows, 0..heads, &mut serial, h);
            let mut split = Vec::new();
            two.install(|| enc.attention(&qkv, &[rows], &mut split));
            assert!(same_bits(&serial, &split), "{heads} heads, {rows} rows");
        }
        // 16 × 384 × 256 multiply-adds: enough to split by columns.
        let (k, n) = (384, 256);
        let w: Vec<f32> = (0..k * n)
            .map(|i| ((i * 31) % 997) as f32 / 997.0 - 0.5)
            .collect();
        let lin = Linear::from_in_out(&w, (0..n).map(|c| c as f32 / 50.0).collect(), k, n);
        for rows in [16, 80] {
            let x: Vec<f32> = (0..rows * k)
                .map(|i| ((i * 13) % 101) as f32 / 25.0 - 2.0)
                .collect();
            let mut serial = Vec::new();
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap()
                .install(|| lin.apply_then(&x, rows, &mut serial, gelu));
            let mut split = Vec::new();
            two.install(|| lin.apply_then(&x, rows, &mut split, gelu));
            assert!(same_bits(&serial, &split), "{rows} rows");
        }
    }

    /// The norms and the GELU of a batch run by chunks of rows over the threads,
    /// as wide as the machine allows: the same bits as one serial portable pass.
    #[test]
    fn rows_over_threads_give_the_serial_result() {
        let (h, rows) = (24, 300);
        let x: Vec<f32> = (0..h * rows)
            .map(|i| ((i * 7919) % 1000) as f32 / 125.0 - 4.0)
            .collect();
        let mut serial = x.clone();
        gelu_lanes(&mut serial);
        let mut split = x.clone();
        by_rows(&mut split, h, |part, _| gelu(part));
        assert!(same_bits(&serial, &split));

        let n = Norm {
            w: (0..h).map(|i| 1.0 + i as f32 / 10.0).collect(),
            b: (0..h).map(|i| i as f32 / 100.0).collect(),
        };
        // The portable loop on one thread, against the machine's widest over
        // the threads: the same bits.
        let y: Vec<f32> = x.iter().map(|v| v * 0.5 - 0.25).collect();
        let mut serial = x.clone();
        add_norm_lanes(&mut serial, Some(&y), &n, h, 1e-12);
        let mut split = x.clone();
        let mut firsts = std::sync::Mutex::new(Vec::new());
        by_rows(&mut split, h, |part, r0| {
            firsts.lock().unwrap().push((r0, part.len() / h));
            add_norm(part, Some(&y[r0 * h..r0 * h + part.len()]), &n, h, 1e-12)
        });
        assert!(same_bits(&serial, &split));
        // The chunks are whole rows, each told where it starts, and cover all.
        let mut firsts = firsts.get_mut().unwrap().clone();
        firsts.sort();
        let mut next = 0;
        for (r0, len) in firsts {
            assert_eq!(r0, next);
            next += len;
        }
        assert_eq!(next, rows);
    }

    #[test]
    fn transposing_from_pytorch_layout_keeps_the_product() {
        // W [out=2][in=3]
        let w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let lin = Linear::from_out_in(&w, vec![0.5, -0.5], 2, 3);
        assert_eq!(
            lin.apply(&[1.0, 0.0, -1.0], 1),
            vec![1.0 - 3.0 + 0.5, 4.0 - 6.0 - 0.5]
        );
        let cat = Linear::concat(
            &[
                (vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0], vec![0.0, 0.0], 2),
                (vec![1.0, 1.0, 1.0], vec![1.0], 1),
            ],
            3,
        );
        assert_eq!(cat.apply(&[1.0, 2.0, 3.0], 1), vec![14.0, 32.0, 7.0]);
    }
}

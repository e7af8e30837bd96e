//! The chat client against stand-in endpoints that misbehave the way a real
//! model server does: it dies mid-answer, stalls mid-answer, answers 503 while
//! it loads, or is down for good. The client must end each turn with an
//! error (never a shortened answer), give a stalled model up at its
//! deadline, retry what is worth retrying, and stop calling a dead endpoint.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tm_ingest::extract::{Breaker, ChatClient, LlmConfig};

/// Serves each request with `respond(n, stream)`, `n` counting from 0;
/// returns the base URL and the request count.
fn stand_in(
    respond: impl Fn(usize, &mut TcpStream) + Send + Sync + 'static,
) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    let respond = Arc::new(respond);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let n = seen.fetch_add(1, Ordering::SeqCst);
            let respond = respond.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut len = 0;
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).unwrap_or(0) == 0 {
                        return;
                    }
                    if h == "\r\n" {
                        break;
                    }
                    if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                let _ = reader.read_exact(&mut body);
                respond(n, &mut stream);
            });
        }
    });
    (url, count)
}

fn sse_head(stream: &mut TcpStream) {
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
    );
}

fn delta(stream: &mut TcpStream, text: &str) {
    let chunk = serde_json::json!({"choices": [{"delta": {"content": text}}]});
    let _ = write!(stream, "data: {chunk}\n\n");
    let _ = stream.flush();
}

fn status(stream: &mut TcpStream, code: u16) {
    let body = "{\"error\":\"loading\"}";
    let _ = write!(
        stream,
        "HTTP/1.1 {code} Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn completion(stream: &mut TcpStream, text: &str) {
    let body =
        serde_json::json!({"choices": [{"message": {"role": "assistant", "content": text}}]})
            .to_string();
    let _ = write!(
        stream,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn ask() -> Vec<serde_json::Value> {
    vec![serde_json::json!({"role": "user", "content": "What is osmosis?"})]
}

#[test]
fn a_stream_that_stops_before_it_is_done_is_an_error_not_a_shorter_answer() {
    let (url, _) = stand_in(|_, s| {
        sse_head(s);
        delta(s, "Osmosis is the ");
        // The server goes away: no more data, no [DONE].
    });
    let client = ChatClient::new(LlmConfig::new(url, "m")).unwrap();
    let mut heard = String::new();
    let got = client.stream(&ask(), 10_000, &mut |d| heard.push_str(d));
    let err = got.expect_err("a cut answer is not an answer");
    assert!(
        err.contains("ended before the answer was finished"),
        "{err}"
    );
    assert_eq!(
        heard, "Osmosis is the ",
        "what arrived was passed on as it came"
    );
}

#[test]
fn a_finish_reason_ends_an_answer_as_done_does() {
    let (url, _) = stand_in(|_, s| {
        sse_head(s);
        delta(s, "Water crosses a membrane.");
        let last = serde_json::json!({"choices": [{"delta": {}, "finish_reason": "stop"}]});
        let _ = write!(s, "data: {last}\n\n");
    });
    let client = ChatClient::new(LlmConfig::new(url, "m")).unwrap();
    let answer = client.stream(&ask(), 10_000, &mut |_| {}).unwrap();
    assert_eq!(answer, "Water crosses a membrane.");
}

#[test]
fn a_model_stalled_mid_answer_is_given_up_at_the_deadline() {
    let (url, _) = stand_in(|_, s| {
        sse_head(s);
        delta(s, "Osmosis ");
        // Stalls far past the client's deadline, then would finish.
        std::thread::sleep(Duration::from_secs(60));
        delta(s, "is diffusion of water.");
        let _ = write!(s, "data: [DONE]\n\n");
    });
    let mut config = LlmConfig::new(url, "m");
    config.timeout = Duration::from_millis(800);
    let client = ChatClient::new(config).unwrap();
    let err = client
        .stream(&ask(), 10_000, &mut |_| {})
        .expect_err("a stalled model is given up on");
    assert!(
        err.to_lowercase().contains("timeout") || err.contains("timed out"),
        "{err}"
    );
}

#[test]
fn a_loading_model_is_retried_and_a_down_one_is_not_called_forever() {
    // 503 twice, then an answer: the call succeeds on its third try.
    let (url, count) = stand_in(|n, s| {
        if n < 2 {
            status(s, 503)
        } else {
            completion(s, "ready")
        }
    });
    let client = ChatClient::new(LlmConfig::new(url, "m")).unwrap();
    assert_eq!(client.complete(&ask(), false, 10_000).unwrap(), "ready");
    assert_eq!(count.load(Ordering::SeqCst), 3);

    // Always 500, no retries: after the breaker's threshold of failed calls
    // the next call fails at once, without reaching the endpoint.
    let (url, count) = stand_in(|_, s| status(s, 500));
    let mut config = LlmConfig::new(url, "m");
    config.retries = 0;
    let client = ChatClient::new(config).unwrap();
    for _ in 0..Breaker::THRESHOLD {
        let err = client.complete(&ask(), false, 10_000).unwrap_err();
        assert!(err.contains("HTTP 500"), "{err}");
    }
    let err = client.complete(&ask(), false, 10_000).unwrap_err();
    assert!(err.contains("resting"), "{err}");
    assert_eq!(count.load(Ordering::SeqCst), Breaker::THRESHOLD as usize);
}

#[test]
fn a_whole_answer_may_take_its_time_a_stream_must_begin_in_time() {
    // The head comes after 1.5 s: for a whole answer that is writing time,
    // for a stream it is a model that has not begun.
    let (url, _) = stand_in(|_, s| {
        std::thread::sleep(Duration::from_millis(1500));
        completion(s, "Osmosis moves water.");
    });
    let mut config = LlmConfig::new(url, "m");
    config.first_byte_timeout = Duration::from_millis(500);
    config.retries = 0;
    let client = ChatClient::new(config.clone()).unwrap();
    assert_eq!(
        client.complete(&ask(), false, 10_000).unwrap(),
        "Osmosis moves water."
    );
    let err = client
        .stream(&ask(), 10_000, &mut |_| {})
        .expect_err("a stream that does not begin in time");
    assert!(
        err.contains("timeout") || err.contains("timed out"),
        "{err}"
    );
}

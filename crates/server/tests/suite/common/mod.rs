//! A service on a real socket for tests that need one: started on a port
//! of its own, stopped (gracefully) on request.

use std::sync::Arc;

pub struct Served {
    pub runtime: tokio::runtime::Runtime,
    pub addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// Serves `brain` with the default configuration on 127.0.0.1, any port.
pub fn serve(brain: tm_brain::Brain) -> Served {
    serve_with(brain, tm_server::Config::default())
}

/// Serves `brain` with `config` on 127.0.0.1, any port.
pub fn serve_with(brain: tm_brain::Brain, config: tm_server::Config) -> Served {
    let state = tm_server::AppState::new(Arc::new(brain), config).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = runtime.spawn(tm_server::serve(listener, state, async {
        let _ = stopped.await;
    }));
    Served {
        runtime,
        addr,
        stop: Some(stop),
        server,
    }
}

impl Served {
    /// Signals the shutdown (as Ctrl-C would); requests in flight go on.
    pub fn signal(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Signals the shutdown and waits until the server has finished.
    pub fn stop(mut self) {
        self.signal();
        self.runtime.block_on(self.server).unwrap().unwrap();
    }
}

//! The test harness's own check: a real `redis-server` starts, answers and stops.

mod support;

use std::net::TcpStream;

use support::RedisServer;

/// The harness works: a started server answers `PING`, and is gone once dropped.
#[test]
fn the_server_starts_answers_and_stops() {
    let server = RedisServer::start();
    assert_eq!(server.command("PING"), "+PONG");
    let port = server.port();
    drop(server);
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

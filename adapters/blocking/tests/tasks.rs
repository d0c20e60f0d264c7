//! A task (SEP-2663) of the demo server's `slow_count` resumed and cancelled through the blocking
//! adapter from its persisted handle, by a second client; another authorization context and a
//! recording session are refused. The tests are shared with the tokio adapter
//! (`checks/support/src/adapter_tests/tasks.rs`); this file says only how the blocking adapter
//! drives a session.

use mcp_sansio::task::{HandleError, TaskError, TaskHandle};
use mcp_sansio::{ContentBlock, Error};
use mcp_sansio_blocking::{AddressPolicy, Client};
use mcp_sansio_demo_server::{DemoServer, Options};
use mcp_sansio_test_support::adapter_tests::tasks::{config, Persist};
use mcp_sansio_test_support::task_resume_tests;

task_resume_tests!(
    #[test]
    []
);

//! What the contenders built on this crate share: the command line and the output line.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

use mcp_sansio::{CallResult, ContentBlock};
use mcp_sansio::{Config, Era, EraHint};

/// A run's parameters: `URL WORK N PAR REPS ERA [fresh]`.
#[derive(Clone, Debug)]
pub struct Args {
    /// The endpoint.
    pub url: String,
    /// `list`, or the name of the tool to call (`small`, `big`).
    pub work: String,
    /// Work items per timed round.
    pub n: usize,
    /// Work items in flight at once.
    pub par: usize,
    /// Timed rounds (after one warm-up work item).
    pub reps: usize,
    /// `modern` (probe every connection), `hint` (era learnt per origin, the default of the
    /// adapters), `legacy` (the `initialize` handshake, told by a legacy hint), `cache` (`hint`
    /// with the adapter's catalog cache on).
    pub era: String,
    /// `fresh` as the seventh argument: every work item builds its own `Client` (no pool, no
    /// era hint carried over), the unpooled setup.
    pub fresh: bool,
}

impl Args {
    /// Parses the process arguments.
    pub fn from_env() -> Args {
        let a: Vec<String> = std::env::args().collect();
        let num = |i: usize| -> usize { a[i].parse().expect("a number") };
        Args {
            url: a[1].clone(),
            work: a[2].clone(),
            n: num(3),
            par: num(4).max(1),
            reps: num(5),
            era: a.get(6).cloned().unwrap_or_else(|| "hint".into()),
            fresh: a.get(7).map(String::as_str) == Some("fresh"),
        }
    }

    /// Whether the adapter's era-hint cache is on.
    pub fn hints(&self) -> bool {
        self.era == "hint" || self.era == "cache"
    }

    /// Whether the adapter's catalog cache is on (`ClientBuilder::catalog_cache`).
    pub fn cache(&self) -> bool {
        self.era == "cache"
    }

    /// The configuration of one work item.
    pub fn config(&self) -> Config {
        let config = Config::new(&self.url).expect("endpoint");
        if self.era == "legacy" {
            config.with_era_hint(Some(EraHint {
                era: Era::Legacy,
                version: mcp_sansio::LEGACY_VERSIONS[0].into(),
            }))
        } else {
            config
        }
    }

    /// The arguments of a tool call.
    pub const ARGUMENTS: &'static [u8] = br#"{"text":"hello"}"#;
}

/// Bytes of text in a result.
pub fn text_len(r: &CallResult) -> usize {
    r.content
        .iter()
        .map(|b| match b {
            ContentBlock::Text { text } => text.len(),
            _ => 0,
        })
        .sum()
}

/// Prints the output line: per-round milliseconds and the check value.
pub fn report(ms: &[f64], check: usize) {
    report_with(ms, check, &[]);
}

/// Prints the output line with extra string fields (such as the HTTP version the work items ran
/// over).
pub fn report_with(ms: &[f64], check: usize, extra: &[(&str, &str)]) {
    let mut line = serde_json::json!({"ms": ms, "check": check});
    for (k, v) in extra {
        line[*k] = serde_json::Value::from(*v);
    }
    println!("{line}");
}

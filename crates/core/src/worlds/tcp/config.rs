//! The resolved spec of a `[tcp]` section (its config is `model::tcp::TcpConfig`).

use serde::Serialize;

use crate::model::path::PathConfig;
use crate::model::rto::RtoParams;
use crate::model::tcp::TcpConfig;
use crate::worlds::TraceConfig;

#[derive(Clone, Debug, Serialize)]
pub struct TcpSpec {
    pub tcp: TcpConfig,
    /// The estimator's constants with the profile's defaults filled in.
    pub rto: RtoParams,
    pub path: PathConfig,
    pub trace: TraceConfig,
}

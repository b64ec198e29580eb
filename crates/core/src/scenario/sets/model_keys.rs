//! `--set` on the models' own keys: a refused value is named as the user wrote it, then
//! by its key, in the words the model's serde types give; an unknown key lists the known
//! ones.

use super::tests::set_error;
use crate::model::grpc::GrpcBackoffConfig;
use crate::model::retry::RetryPolicyConfig;
use crate::model::rto::RtoConfig;

#[test]
fn a_refused_retry_policy_set_names_its_key() {
    let err = set_error::<RetryPolicyConfig>;
    assert!(err("base", "5").starts_with("--set base=5: base: "), "{}", err("base", "5"));
    assert!(err("jitter", "fuzzy").contains("jitter: "), "{}", err("jitter", "fuzzy"));
    assert!(err("max_attempts", "-1").starts_with("--set max_attempts=-1: max_attempts: "));
    assert!(err("backoff", "1s").contains("unknown key `backoff`, expected one of `preset`, `base`"));
}

#[test]
fn a_refused_rto_set_names_its_key() {
    let err = set_error::<RtoConfig>;
    assert!(err("min_rto", "5").starts_with("--set min_rto=5: min_rto: "), "{}", err("min_rto", "5"));
    assert!(err("karn", "yes").starts_with("--set karn=yes: karn: wrong type"), "{}", err("karn", "yes"));
    assert!(err("hz", "-1").starts_with("--set hz=-1: hz: "));
    assert!(err("alpha", "NaN").starts_with("--set alpha=NaN: alpha: "));
    assert!(
        err("profile", "bsd").contains("unknown variant `bsd`, expected `rfc6298` or `linux`"),
        "{}",
        err("profile", "bsd")
    );
    assert!(err("rto_min", "1s").contains("unknown key `rto_min`, expected one of `profile`, `initial_rto`"));
}

#[test]
fn a_refused_grpc_backoff_set_names_its_key() {
    let err = set_error::<GrpcBackoffConfig>;
    assert!(
        err("initial_backoff", "5").starts_with("--set initial_backoff=5: initial_backoff: "),
        "{}",
        err("initial_backoff", "5")
    );
    assert!(err("jitter", "NaN").contains("`NaN` is not a fraction"), "{}", err("jitter", "NaN"));
    assert!(err("profile", "grpc-rust").contains("`spec`, `grpc-core`, `grpc-go`"), "{}", err("profile", "grpc-rust"));
    assert!(err("max_delay", "1s").contains("unknown key `max_delay`"), "{}", err("max_delay", "1s"));
}

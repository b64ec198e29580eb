//! The one error type of every config check: a key path and what is wrong with it.
//!
//! Configs report problems by key, not by place: only the scenario loader knows where a
//! key was written (file, line, column, or a `--set`), so it turns these into
//! diagnostics. Every check collects all its problems so a user fixes a file in one pass.

use std::fmt;

/// One problem with a config: `key` is a dotted path relative to the config checked
/// (`loss.p`, `workload.interval`), empty for the config as a whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() { f.write_str(&self.message) } else { write!(f, "{}: {}", self.key, self.message) }
    }
}

/// The problems one check found, in the order found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigErrors(Vec<ConfigError>);

impl ConfigErrors {
    pub fn new() -> Self {
        ConfigErrors(Vec::new())
    }

    pub fn push(&mut self, key: impl Into<String>, message: impl Into<String>) {
        self.0.push(ConfigError { key: key.into(), message: message.into() });
    }

    /// Takes a sub-config's problems, their keys placed under `prefix` (`tcp`, `path`).
    pub fn extend_under(&mut self, prefix: &str, other: ConfigErrors) {
        self.0.extend(other.0.into_iter().map(|e| ConfigError { key: under(prefix, &e.key), ..e }));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, ConfigError> {
        self.0.iter()
    }

    /// `value` when nothing was found, else these problems.
    pub fn into_result<T>(self, value: T) -> Result<T, ConfigErrors> {
        if self.0.is_empty() { Ok(value) } else { Err(self) }
    }

    /// The keys with a problem, in order (for tests and summaries).
    pub fn keys(&self) -> Vec<&str> {
        self.0.iter().map(|e| e.key.as_str()).collect()
    }

    /// (key, message) pairs, for tests to compare whole lists at once.
    #[cfg(test)]
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0.iter().map(|e| (e.key.clone(), e.message.clone())).collect()
    }

    /// The message given for `key`, if any.
    pub fn message(&self, key: &str) -> Option<&str> {
        self.0.iter().find(|e| e.key == key).map(|e| e.message.as_str())
    }
}

impl IntoIterator for ConfigErrors {
    type Item = ConfigError;
    type IntoIter = std::vec::IntoIter<ConfigError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a ConfigErrors {
    type Item = &'a ConfigError;
    type IntoIter = std::slice::Iter<'a, ConfigError>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// `prefix.key`, or either alone when the other is empty.
fn under(prefix: &str, key: &str) -> String {
    match (prefix.is_empty(), key.is_empty()) {
        (true, _) => key.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{key}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_config_errors_are_placed_under_their_section() {
        let mut inner = ConfigErrors::new();
        inner.push("p", "must be a probability");
        inner.push("", "is empty");
        let mut outer = ConfigErrors::new();
        outer.push("name", "is bad");
        outer.extend_under("path.loss", inner);
        assert_eq!(outer.keys(), ["name", "path.loss.p", "path.loss"]);
        assert_eq!(outer.message("path.loss.p"), Some("must be a probability"));
        assert_eq!(outer.to_string(), "name: is bad\npath.loss.p: must be a probability\npath.loss: is empty");
    }

    #[test]
    fn no_problem_gives_the_value_and_any_problem_refuses_it() {
        assert_eq!(ConfigErrors::new().into_result(3), Ok(3));
        let mut e = ConfigErrors::new();
        e.push("k", "bad");
        assert_eq!(e.clone().into_result(3), Err(e));
    }
}

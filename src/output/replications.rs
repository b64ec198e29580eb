//! `replications.csv`: every metric of every replication, one row each, so that a user
//! (or a merge of shards) has the values the summary was computed from, and so that the
//! variants' values can be paired replication by replication.

use super::summary::{Group, num};

/// `variant, <sweep keys…>, replication, metric, unit, value`, in group order, then
/// replication, then the order each replication reports its metrics; a metric without a
/// value in a replication (a convergence that never happened) has an empty `value`.
pub fn write_csv(sweep_keys: &[String], groups: &[Group<'_>]) -> Result<Vec<u8>, csv::Error> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["variant"];
    header.extend(sweep_keys.iter().map(String::as_str));
    header.extend(["replication", "metric", "unit", "value"]);
    w.write_record(&header)?;
    for g in groups {
        for (r, rep) in g.reps.iter().enumerate() {
            for m in &rep.metrics {
                let mut record = vec![g.variant.to_string()];
                record.extend(g.sweep.iter().cloned());
                record.extend([r.to_string(), m.name.clone(), m.unit.to_string(), num(m.value)]);
                w.write_record(&record)?;
            }
        }
    }
    w.into_inner().map_err(|e| e.into_error().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{MetricValue, ReplicationResult};

    #[test]
    fn every_replications_every_metric_is_a_row_and_a_missing_value_is_empty() {
        let rep = |x: f64, y: Option<f64>| ReplicationResult {
            metrics: vec![MetricValue::new("x", "s", x), MetricValue::maybe("y", "count", y)],
            ..Default::default()
        };
        let reps = [rep(1.5, Some(2.0)), rep(3.0, None)];
        let sweep = ["10".to_string()];
        let csv = write_csv(&["tcp.window".into()], &[Group { variant: "a", sweep: &sweep, reps: &reps }]).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            "variant,tcp.window,replication,metric,unit,value\n\
             a,10,0,x,s,1.5\na,10,0,y,count,2\na,10,1,x,s,3\na,10,1,y,count,\n"
        );
    }
}

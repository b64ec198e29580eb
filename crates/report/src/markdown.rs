//! `report.md`: the report as Markdown, with the PNG plots beside it.

use std::fmt::Write;

use super::contents::{Column, Entry, MetricTable, Report, better_text};
use backoffsim_core::run::interrupt::Interrupted;

/// Escapes what would break a Markdown table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The page of `r`; it gives up at a requested interrupt, looking at the flag once per
/// table row.
pub fn render(r: &Report) -> Result<String, Interrupted> {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(w, "# {}\n", r.title);
    for (label, q) in &r.questions {
        if label.is_empty() {
            let _ = writeln!(w, "> {}\n", q.replace('\n', " "));
        } else {
            let _ = writeln!(w, "> **{label}:** {}\n", q.replace('\n', " "));
        }
    }
    for f in &r.facts {
        let _ = writeln!(w, "{f}  ");
    }
    let _ = writeln!(w);

    let _ = writeln!(w, "## Variants\n");
    if let Some((base, _)) = r.variants.first()
        && r.variants.len() > 1
    {
        let _ = writeln!(w, "The first, **{base}**, is the baseline of every comparison.\n");
    }
    for (name, desc) in &r.variants {
        if desc.is_empty() {
            let _ = writeln!(w, "- **{name}**");
        } else {
            let _ = writeln!(w, "- **{name}**: {}", desc.replace('\n', " "));
        }
    }
    let _ = writeln!(w);
    if r.variants.len() > 1 {
        if r.params.is_empty() {
            let _ = writeln!(w, "The variants' resolved parameters are all the same.\n");
        } else {
            let _ = writeln!(
                w,
                "Parameters that differ between the variants (**bold**: differs from the \
                 baseline; — not set); every other parameter is the same for all and is listed \
                 in `manifest.json`.\n"
            );
            let _ = write!(w, "| parameter |");
            for (name, _) in &r.variants {
                let _ = write!(w, " {} |", cell(name));
            }
            let _ = write!(w, "\n|---|");
            for _ in &r.variants {
                let _ = write!(w, "---|");
            }
            let _ = writeln!(w);
            for p in &r.params {
                backoffsim_core::run::interrupt::check()?;
                let _ = write!(w, "| `{}` |", p.key);
                for (i, v) in p.values.iter().enumerate() {
                    let v = v.as_deref().map(cell).unwrap_or_else(|| "—".into());
                    if p.differs(i) {
                        let _ = write!(w, " **{v}** |");
                    } else {
                        let _ = write!(w, " {v} |");
                    }
                }
                let _ = writeln!(w);
            }
            let _ = writeln!(w);
            if let Some(more) = params_more(r.params_more) {
                let _ = writeln!(w, "{more}\n");
            }
        }
    }

    let _ = writeln!(w, "## Results\n");
    let baseline = r.variants.first().map(|v| v.0.as_str()).unwrap_or("");
    if r.variants.len() > 1 {
        let _ = writeln!(
            w,
            "Mean ± half-width of the 95 % confidence interval over replications; in brackets \
             the difference to the baseline, **{baseline}**. **Bold**: the best variant on that \
             metric.\n"
        );
    } else {
        let _ = writeln!(w, "Mean ± half-width of the 95 % confidence interval over replications.\n");
    }
    for t in &r.tables {
        table(w, t)?;
    }
    for n in &r.notes {
        let _ = writeln!(w, "- {n}");
    }
    if !r.notes.is_empty() {
        let _ = writeln!(w);
    }

    if !r.paired.rows.is_empty() || r.paired.equal > 0 {
        let baseline = r.variants.first().map(|v| v.0.as_str()).unwrap_or("");
        let _ = writeln!(w, "## Paired differences\n");
        let _ = writeln!(w, "{}\n", super::paired::INTRO.replace("{baseline}", &format!("**{baseline}**")));
        let _ = writeln!(w, "| {} |", r.paired.header.iter().map(|h| cell(h)).collect::<Vec<_>>().join(" | "));
        let _ = writeln!(w, "|{}", "---|".repeat(r.paired.header.len()));
        for row in &r.paired.rows {
            backoffsim_core::run::interrupt::check()?;
            let _ = writeln!(w, "| {} |", row.iter().map(|c| cell(c)).collect::<Vec<_>>().join(" | "));
        }
        let _ = writeln!(w);
        if let Some(s) = super::paired::equal_note(&r.paired) {
            let _ = writeln!(w, "{s}\n");
        }
        if let Some(s) = super::paired::more_note(&r.paired) {
            let _ = writeln!(w, "{s}\n");
        }
    }

    if !r.plots.is_empty() {
        let _ = writeln!(w, "## Plots\n");
        for p in &r.plots {
            let _ = writeln!(w, "### {}\n", p.title);
            let _ = writeln!(w, "![{}]({}.png)\n", p.title, p.stem);
            let _ = writeln!(w, "{} ([SVG]({}.svg))\n", p.caption, p.stem);
            for (panel, what) in &p.panels {
                let _ = writeln!(w, "- **{panel}**: {what}");
            }
            if !p.panels.is_empty() {
                let _ = writeln!(w);
            }
        }
    }
    if !r.redraw.is_empty() {
        let _ = writeln!(w, "## Re-drawing a plot\n");
        let _ = writeln!(
            w,
            "Any plot can be re-drawn from the files of this run, narrowed to a variant, a \
             connection (`--client`), a replication or a time window, as SVG or PNG:\n"
        );
        let _ = writeln!(w, "```sh");
        for c in &r.redraw {
            let _ = writeln!(w, "{c}");
        }
        let _ = writeln!(w, "```");
    }
    Ok(o)
}

/// The sentence under a parameter table that left `n` parameters out, if it did.
pub fn params_more(n: usize) -> Option<String> {
    let what = if n == 1 { "parameter differs" } else { "parameters differ" };
    (n > 0).then(|| format!("{n} more {what} between the variants; `manifest.json` lists every variant's parameters."))
}

fn table(w: &mut String, t: &MetricTable) -> Result<(), Interrupted> {
    if let Some(h) = &t.heading {
        let _ = writeln!(w, "### {h}\n");
    }
    let layout = t.layout();
    let _ = write!(w, "|");
    for c in &layout {
        let _ = match c {
            Column::First(f) => write!(w, " {} |", cell(f)),
            Column::Unit => write!(w, " unit |"),
            Column::Better => write!(w, " better |"),
            Column::Variant { name, baseline: true } => write!(w, " {} (baseline) |", cell(name)),
            Column::Variant { name, baseline: false } => write!(w, " {} |", cell(name)),
            Column::Best => write!(w, " best |"),
        };
    }
    let _ = write!(w, "\n|");
    for c in &layout {
        // Numbers align right.
        let _ = write!(w, "{}", if matches!(c, Column::Variant { .. }) { "---:|" } else { "---|" });
    }
    let _ = writeln!(w);
    for row in &t.rows {
        backoffsim_core::run::interrupt::check()?;
        let _ = write!(w, "|");
        for e in t.entries(row) {
            let _ = match e {
                Entry::First(l) | Entry::Unit(l) => write!(w, " {} |", cell(l)),
                Entry::Better(b) => write!(w, " {} |", better_text(b)),
                Entry::Variant(None) => write!(w, " — |"),
                Entry::Variant(Some(c)) => {
                    let mut s = if c.best { format!("**{}**", c.text) } else { c.text.clone() };
                    if let Some(n) = c.n_note {
                        let _ = write!(s, " (n = {n})");
                    }
                    if let Some(rel) = &c.rel {
                        let _ = write!(s, " ({rel})");
                    }
                    write!(w, " {s} |")
                }
                Entry::Best(v) => write!(w, " {} |", cell(&v.text())),
            };
        }
        let _ = writeln!(w);
    }
    let _ = writeln!(w);
    Ok(())
}

//! `report.html`: the report as one self-contained page. The plots are inline SVG, the
//! style is inline CSS; nothing is loaded from anywhere else and there is no script.

use std::fmt::Write;

use super::contents::{Column, Entry, MetricTable, Report, better_text};
use backoffsim_core::run::interrupt::Interrupted;

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// Inline `code` spans of Markdown-ish notes as `<code>`.
fn code_spans(s: &str) -> String {
    let mut out = String::new();
    for (i, part) in esc(s).split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{part}</code>");
        } else {
            out.push_str(part);
        }
    }
    out
}

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', 'DejaVu Sans', sans-serif;
       max-width: 1200px; margin: 1.5em auto; padding: 0 1em; color: #212121; line-height: 1.45; }
h1 { font-size: 1.6em; margin-bottom: 0.3em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }
h3 { font-size: 1.05em; margin-top: 1.2em; }
blockquote { margin: 0.6em 0; padding: 0.5em 1em; background: #f4f7fb; border-left: 4px solid #0072b2; }
.facts { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #d8d8d8; padding: 0.25em 0.6em; vertical-align: top; }
th { background: #f3f3f3; text-align: left; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.diff { background: #fff1bf; font-weight: 600; }
td.best { background: #dff3e6; font-weight: 700; }
td.verdict { min-width: 7em; max-width: 14em; }
.rel { color: #666; font-weight: normal; font-size: 0.85em; }
.wide { overflow-x: auto; }
.n { color: #8a5a00; font-weight: normal; font-size: 0.92em; }
.muted { color: #777; }
ul.notes { font-size: 0.9em; color: #444; }
figure { margin: 1em 0 2em; }
figure svg { width: 100%; height: auto; border: 1px solid #eee; }
figcaption { font-size: 0.92em; color: #444; margin-top: 0.3em; }
pre { background: #f6f6f6; padding: 0.6em 0.8em; overflow-x: auto; font-size: 0.88em; }
code { background: #f3f3f3; padding: 0 0.2em; }
";

/// Renders the page; `svgs` holds each plot's SVG by file stem, in `r.plots` order.
/// It gives up at a requested interrupt, looking at the flag once per table row.
pub fn render(r: &Report, svgs: &[(String, String)]) -> Result<String, Interrupted> {
    let mut o = String::new();
    let w = &mut o;
    let _ = writeln!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} — backoffsim report</title>\n<style>{STYLE}</style>\n</head>\n<body>",
        esc(&r.title)
    );
    let _ = writeln!(w, "<h1>{}</h1>", esc(&r.title));
    for (label, q) in &r.questions {
        if label.is_empty() {
            let _ = writeln!(w, "<blockquote>{}</blockquote>", esc(q));
        } else {
            let _ = writeln!(w, "<blockquote><strong>{}:</strong> {}</blockquote>", esc(label), esc(q));
        }
    }
    let _ = writeln!(w, "<p class=\"facts\">");
    for (i, f) in r.facts.iter().enumerate() {
        let _ = writeln!(w, "{}{}", if i > 0 { "<br>" } else { "" }, esc(f));
    }
    let _ = writeln!(w, "</p>");

    let _ = writeln!(w, "<h2>Variants</h2>");
    if r.variants.len() > 1 {
        let _ = writeln!(
            w,
            "<p>The first, <strong>{}</strong>, is the baseline of every comparison.</p>",
            esc(&r.variants[0].0)
        );
    }
    let _ = writeln!(w, "<table>\n<tr><th>variant</th><th>description</th></tr>");
    for (name, desc) in &r.variants {
        let _ = writeln!(w, "<tr><td><strong>{}</strong></td><td>{}</td></tr>", esc(name), esc(desc));
    }
    let _ = writeln!(w, "</table>");
    if r.variants.len() > 1 {
        if r.params.is_empty() {
            let _ = writeln!(w, "<p>The variants' resolved parameters are all the same.</p>");
        } else {
            let _ = writeln!(
                w,
                "<p>Parameters that differ between the variants (highlighted: differs from the \
                 baseline; — not set). Every other parameter is the same for all and is listed \
                 in <code>manifest.json</code>.</p>"
            );
            let _ = write!(w, "<table>\n<tr><th>parameter</th>");
            for (name, _) in &r.variants {
                let _ = write!(w, "<th>{}</th>", esc(name));
            }
            let _ = writeln!(w, "</tr>");
            for p in &r.params {
                backoffsim_core::run::interrupt::check()?;
                let _ = write!(w, "<tr><td><code>{}</code></td>", esc(&p.key));
                for (i, v) in p.values.iter().enumerate() {
                    let v = v.as_deref().unwrap_or("—");
                    let class = if p.differs(i) { " class=\"diff\"" } else { "" };
                    let _ = write!(w, "<td{class}>{}</td>", esc(v));
                }
                let _ = writeln!(w, "</tr>");
            }
            let _ = writeln!(w, "</table>");
            if let Some(more) = super::markdown::params_more(r.params_more) {
                let _ = writeln!(w, "<p>{}</p>", code_spans(&more));
            }
        }
    }

    let _ = writeln!(w, "<h2>Results</h2>");
    if r.variants.len() > 1 {
        let _ = writeln!(
            w,
            "<p>Mean ± half-width of the 95 % confidence interval over replications; \
             in grey under each value its difference to the baseline, <strong>{}</strong>. Green: \
             the best variant on that metric.</p>",
            esc(&r.variants[0].0)
        );
    } else {
        let _ = writeln!(w, "<p>Mean ± half-width of the 95 % confidence interval over replications.</p>");
    }
    for t in &r.tables {
        table(w, t)?;
    }
    if !r.notes.is_empty() {
        let _ = writeln!(w, "<ul class=\"notes\">");
        for n in &r.notes {
            let _ = writeln!(w, "<li>{}</li>", code_spans(n));
        }
        let _ = writeln!(w, "</ul>");
    }

    if !r.paired.rows.is_empty() || r.paired.equal > 0 {
        let baseline = r.variants.first().map(|v| v.0.as_str()).unwrap_or("");
        let _ = writeln!(w, "<h2>Paired differences</h2>");
        let intro =
            code_spans(super::paired::INTRO).replace("{baseline}", &format!("<strong>{}</strong>", esc(baseline)));
        let _ = writeln!(w, "<p>{intro}</p>");
        let _ = write!(w, "<table>\n<tr>");
        for h in &r.paired.header {
            let _ = write!(w, "<th>{}</th>", esc(h));
        }
        let _ = writeln!(w, "</tr>");
        for row in &r.paired.rows {
            backoffsim_core::run::interrupt::check()?;
            let _ = write!(w, "<tr>");
            for (k, c) in row.iter().enumerate() {
                let class = if k + 1 == row.len() && c == "excluded" { " class=\"num best\"" } else { "" };
                let _ = write!(w, "<td{class}>{}</td>", esc(c));
            }
            let _ = writeln!(w, "</tr>");
        }
        let _ = writeln!(w, "</table>");
        if let Some(s) = super::paired::equal_note(&r.paired) {
            let _ = writeln!(w, "<p>{}</p>", esc(&s));
        }
        if let Some(s) = super::paired::more_note(&r.paired) {
            let _ = writeln!(w, "<p>{}</p>", esc(&s));
        }
    }

    if !r.plots.is_empty() {
        let _ = writeln!(w, "<h2>Plots</h2>");
        for p in &r.plots {
            let svg = svgs.iter().find(|(stem, _)| *stem == p.stem).map(|(_, s)| s.as_str()).unwrap_or("");
            let mut caption = code_spans(&p.caption);
            if !p.panels.is_empty() {
                caption.push_str("\n<ul>");
                for (panel, what) in &p.panels {
                    let _ = write!(caption, "\n<li><b>{}</b>: {}</li>", esc(panel), code_spans(what));
                }
                caption.push_str("\n</ul>");
            }
            let _ = writeln!(
                w,
                "<h3>{}</h3>\n<figure>\n{}\n<figcaption>{caption}</figcaption>\n</figure>",
                esc(&p.title),
                svg.trim(),
            );
        }
    }
    if !r.redraw.is_empty() {
        let _ = writeln!(
            w,
            "<h2>Re-drawing a plot</h2>\n<p>Any plot can be re-drawn from the files of this \
             run, narrowed to a variant, a connection (<code>--client</code>), a replication or \
             a time window, as SVG or PNG:</p>\n<pre>"
        );
        for c in &r.redraw {
            let _ = writeln!(w, "{}", esc(c));
        }
        let _ = writeln!(w, "</pre>");
    }
    let _ = writeln!(w, "</body>\n</html>");
    Ok(o)
}

fn table(w: &mut String, t: &MetricTable) -> Result<(), Interrupted> {
    if let Some(h) = &t.heading {
        let _ = writeln!(w, "<h3>{}</h3>", code_spans(h));
    }
    let _ = write!(w, "<div class=\"wide\"><table>\n<tr>");
    for c in t.layout() {
        let _ = match c {
            Column::First(f) => write!(w, "<th>{}</th>", esc(f)),
            Column::Unit => write!(w, "<th>unit</th>"),
            Column::Better => write!(w, "<th>better</th>"),
            Column::Variant { name, baseline: true } => {
                write!(w, "<th>{}<br><span class=\"muted\">baseline</span></th>", esc(name))
            }
            Column::Variant { name, baseline: false } => write!(w, "<th>{}</th>", esc(name)),
            Column::Best => write!(w, "<th>best</th>"),
        };
    }
    let _ = writeln!(w, "</tr>");
    for row in &t.rows {
        backoffsim_core::run::interrupt::check()?;
        let _ = write!(w, "<tr>");
        for e in t.entries(row) {
            let _ = match e {
                Entry::First(l) | Entry::Unit(l) => write!(w, "<td>{}</td>", esc(l)),
                Entry::Better(b) => write!(w, "<td>{}</td>", better_text(b)),
                Entry::Variant(None) => write!(w, "<td class=\"num muted\">—</td>"),
                Entry::Variant(Some(c)) => {
                    let class = if c.best { "num best" } else { "num" };
                    let mut s = esc(&c.text);
                    if let Some(n) = c.n_note {
                        let _ = write!(s, " <span class=\"n\">(n = {n})</span>");
                    }
                    if let Some(rel) = &c.rel {
                        let _ = write!(s, "<br><span class=\"rel\">{}</span>", esc(rel));
                    }
                    write!(w, "<td class=\"{class}\">{s}</td>")
                }
                Entry::Best(v) => write!(w, "<td class=\"verdict\">{}</td>", esc(&v.text())),
            };
        }
        let _ = writeln!(w, "</tr>");
    }
    let _ = writeln!(w, "</table></div>");
    Ok(())
}

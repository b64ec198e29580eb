//! The PNG backend: plotters' bitmap backend with text drawn here.
//!
//! plotters 0.3.7 draws ab_glyph text glyph by glyph at truncated pen positions and
//! drops each glyph's left side bearing, so letters sit unevenly ("samp le"). This
//! backend passes every shape straight to the bitmap backend and draws text itself with
//! the same fonts and the same anchor and layout box that plotters computes (so labels
//! land where plotters placed them), but lays glyphs out at fractional pen positions with
//! kerning and their bearings, the way the font means them.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use ab_glyph::{Font, FontRef, PxScale, ScaleFont, point};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingErrorKind, FontStyle};

pub(crate) struct Raster<'a>(pub BitMapBackend<'a>);

type Error<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

fn font(style: FontStyle) -> &'static FontRef<'static> {
    static FONTS: OnceLock<[FontRef<'static>; 2]> = OnceLock::new();
    let fonts = FONTS.get_or_init(|| {
        let load = |bytes| FontRef::try_from_slice(bytes).expect("the dejavu crate's font parses");
        [load(dejavu::sans::regular()), load(dejavu::sans::bold())]
    });
    match style {
        FontStyle::Bold => &fonts[1],
        _ => &fonts[0],
    }
}

impl<'a> DrawingBackend for Raster<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }
    fn ensure_prepared(&mut self) -> Result<(), Error<'a>> {
        self.0.ensure_prepared()
    }
    fn present(&mut self) -> Result<(), Error<'a>> {
        self.0.present()
    }
    fn draw_pixel(&mut self, p: BackendCoord, c: BackendColor) -> Result<(), Error<'a>> {
        self.0.draw_pixel(p, c)
    }
    fn draw_line<S: BackendStyle>(&mut self, from: BackendCoord, to: BackendCoord, style: &S) -> Result<(), Error<'a>> {
        self.0.draw_line(from, to, style)
    }
    fn draw_rect<S: BackendStyle>(
        &mut self,
        a: BackendCoord,
        b: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.0.draw_rect(a, b, style, fill)
    }
    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.0.draw_path(path, style)
    }
    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), Error<'a>> {
        self.0.draw_circle(center, radius, style, fill)
    }
    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), Error<'a>> {
        self.0.fill_polygon(vert, style)
    }
    fn blit_bitmap(&mut self, pos: BackendCoord, size: (u32, u32), src: &[u8]) -> Result<(), Error<'a>> {
        self.0.blit_bitmap(pos, size, src)
    }

    fn draw_text<S: BackendTextStyle>(&mut self, text: &str, style: &S, pos: BackendCoord) -> Result<(), Error<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        // The anchor as plotters computes it, from its own layout box.
        let ((min_x, min_y), (max_x, max_y)) =
            style.layout_box(text).map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let size = style.size() as f32;
        let font = font(style.style());
        let scale = PxScale::from(size);
        let scaled = font.as_scaled(scale);
        // plotters puts the baseline half the size below the top of the layout box.
        let baseline = size / 2.0;
        let mut coverage: BTreeMap<(i32, i32), f32> = BTreeMap::new();
        let mut pen = 0.0f32;
        let mut prev = None;
        for c in text.chars() {
            let id = scaled.glyph_id(c);
            if let Some(p) = prev {
                pen += scaled.kern(p, id);
            }
            let glyph = id.with_scale_and_position(scale, point(pen, baseline));
            if let Some(outline) = font.outline_glyph(glyph) {
                let b = outline.px_bounds();
                let (bx, by) = (b.min.x as i32, b.min.y as i32);
                outline.draw(|x, y, v| {
                    let e = coverage.entry((bx + x as i32, by + y as i32)).or_insert(0.0);
                    *e = (*e + v).min(1.0);
                });
            }
            pen += scaled.h_advance(id);
            prev = Some(id);
        }
        let trans = style.transform();
        let (w, h) = self.get_size();
        for ((x, y), v) in coverage {
            if v <= 0.0 {
                continue;
            }
            let (x, y) = trans.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                self.0.draw_pixel((x, y), color.mix(v as f64))?;
            }
        }
        Ok(())
    }
}

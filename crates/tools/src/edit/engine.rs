//! The edit ladder: ways of finding old_string, from strict to forgiving, each accepted only
//! when it finds exactly one place (the rules are in the documentation of [`super`]). Several
//! places at any rung is a refusal, not a guess; no rung measures edit distance, so a near
//! miss is refused with the closest region shown.

use std::ops::Range;

use super::blocks::{Tolerance, candidate_lines, find_lines};
use super::closest::{Region, closest_region};
use super::decode::{Decoding, decode_new, decode_old, diff_pair};
use super::lines::{FileText, LineSpan, ModelText, line_numbers, split_trailing_newline};
use super::lookalike::contains_look_alike;
use super::place::{Ignored, Place, PlaceKind};
use super::restate::restate;
use super::substring;

/// Match positions listed in a refusal at most.
const AMBIGUOUS_LINES_SHOWN: usize = 10;
/// Occurrences counted at most for an ambiguity report.
pub(crate) const AMBIGUOUS_COUNT_MAX: usize = 10_000;

/// Whether to replace one occurrence or all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replace {
    /// Exactly one place must match, at the first rung that finds any.
    One,
    /// Every place found at the first rung that finds any (none overlapping).
    All,
}

/// The rung of the ladder that found the text; each ignores what the ones before it ignore.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rung {
    /// Byte for byte.
    Exact,
    /// With `\r\n` and `\n` treated alike.
    LineEndings,
    /// Whole lines, ignoring whitespace at their ends.
    TrailingWhitespace,
    /// Whole lines, ignoring indentation as a whole (the nesting must be the file's).
    Indentation,
    /// Ignoring typographic look-alikes too (as a piece of text, or as whole lines).
    LookAlikes,
    /// Whole lines, ignoring the length of blank-line runs too.
    BlankLines,
    /// Whole lines, the last of which may be only the start of its file line.
    CutLastLine,
}

impl Rung {
    const EXACT: [Rung; 2] = [Rung::Exact, Rung::LineEndings];
    const FORGIVING: [Rung; 5] = [
        Rung::TrailingWhitespace,
        Rung::Indentation,
        Rung::LookAlikes,
        Rung::BlankLines,
        Rung::CutLastLine,
    ];
    const ALL: [Rung; 7] = [
        Rung::Exact,
        Rung::LineEndings,
        Rung::TrailingWhitespace,
        Rung::Indentation,
        Rung::LookAlikes,
        Rung::BlankLines,
        Rung::CutLastLine,
    ];

    /// How the text was found, for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Rung::Exact => "exactly",
            Rung::LineEndings => "with line endings normalised",
            Rung::TrailingWhitespace => "ignoring trailing whitespace",
            Rung::Indentation => "ignoring indentation",
            Rung::LookAlikes => "ignoring typographic quotes, dashes and no-break spaces",
            Rung::BlankLines => "ignoring the number of blank lines",
            Rung::CutLastLine => "with its last line cut short",
        }
    }

    fn tolerance(self) -> Tolerance {
        let at_least = |rung: Rung| self as u8 >= rung as u8;
        Tolerance {
            indentation: at_least(Rung::Indentation),
            look_alikes: at_least(Rung::LookAlikes),
            blank_runs: at_least(Rung::BlankLines),
            cut_last_line: at_least(Rung::CutLastLine),
        }
    }
}

/// One replaced span: where it was in the old text and where its replacement is in the new.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// Byte range in the old text.
    pub old: Range<usize>,
    /// Byte range in the new text.
    pub new: Range<usize>,
}

/// How old_string was found, for telling the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct How {
    /// The rung that found it.
    pub rung: Rung,
    /// How both strings were decoded first, if they were.
    pub decoding: Option<Decoding>,
    /// What differed from the file, over every place.
    pub ignored: Ignored,
    /// Whether lines new_string repeats kept file text unlike the model's (beyond indentation).
    pub kept_file_text: bool,
    /// The 1-based line whose start old_string's cut-off last line matched (first place).
    pub cut_line: Option<usize>,
}

/// A successful edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edited {
    /// The whole new text.
    pub text: String,
    /// What changed, in order.
    pub changes: Vec<Change>,
    /// How old_string was found.
    pub how: How,
}

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// old_string equals new_string (after decoding).
    Identical,
    /// The file already reads as new_string says (what differed was forgiven).
    Unchanged {
        /// How old_string was found.
        how: Box<How>,
    },
    /// Several places match at a rung.
    Ambiguous {
        /// The rung that found them.
        rung: Rung,
        /// How the strings had been decoded.
        decoding: Option<Decoding>,
        /// How many places (capped at [`AMBIGUOUS_COUNT_MAX`]).
        count: usize,
        /// The first lines where they start.
        lines: Vec<usize>,
    },
    /// old_string was found once decoded, but new_string cannot be decoded the same way.
    Inconsistent {
        decoding: Decoding,
        /// What is wrong with new_string.
        problem: &'static str,
        /// Where the decoded old_string starts.
        line: usize,
    },
    /// No rung found it.
    NotFound {
        /// The region most like old_string.
        closest: Option<Region>,
        /// Lines with old_string's text that nest differently (rule 4), first and last.
        nested_differently: Option<(usize, usize)>,
    },
}

/// Applies the edit to `text` (the file without its byte-order mark). `old` must not be empty.
pub(crate) fn apply_edit(
    text: &str,
    old: &str,
    new: &str,
    replace: Replace,
) -> Result<Edited, Refusal> {
    if old == new {
        return Err(Refusal::Identical);
    }
    let file = FileText::new(text);
    let mut search = Search {
        file: &file,
        replace,
        nested_differently: None,
    };
    if let Some(found) = search.run(old, &Rung::EXACT, None)? {
        return finish(&file, &found, old, new, None);
    }
    // Written as a diff on both sides: a forgiving rung must not write the markers as text.
    let diff_first = diff_pair(old, new);
    if diff_first && let Some(edited) = search.decoded(Decoding::DiffMarkers, old, new)? {
        return Ok(edited);
    }
    if let Some(found) = search.run(old, &Rung::FORGIVING, None)? {
        return finish(&file, &found, old, new, None);
    }
    for decoding in Decoding::ALL {
        if diff_first && decoding == Decoding::DiffMarkers {
            continue;
        }
        if let Some(edited) = search.decoded(decoding, old, new)? {
            return Ok(edited);
        }
    }
    let decoded = Decoding::ALL
        .iter()
        .find_map(|&decoding| decode_old(decoding, old, new));
    Err(Refusal::NotFound {
        closest: closest_region(text, decoded.as_deref().unwrap_or(old)),
        nested_differently: search.nested_differently,
    })
}

/// The places found at one rung.
struct Found {
    rung: Rung,
    places: Vec<Place>,
}

struct Search<'f> {
    file: &'f FileText<'f>,
    replace: Replace,
    nested_differently: Option<(usize, usize)>,
}

impl Search<'_> {
    /// The first of `rungs` that finds old_string; several places for one is a refusal.
    fn run(
        &mut self,
        old: &str,
        rungs: &[Rung],
        decoding: Option<Decoding>,
    ) -> Result<Option<Found>, Refusal> {
        let model = ModelText::new(old);
        let mut candidates = None;
        for &rung in rungs {
            let places = self.places(rung, old, &model, &mut candidates);
            match (self.replace, places.len()) {
                (_, 0) => {}
                (Replace::One, count @ 2..) => {
                    let starts: Vec<usize> = places
                        .iter()
                        .take(AMBIGUOUS_LINES_SHOWN)
                        .map(|p| p.range.start)
                        .collect();
                    return Err(Refusal::Ambiguous {
                        rung,
                        decoding,
                        count,
                        lines: line_numbers(self.file.text, &starts),
                    });
                }
                _ => return Ok(Some(Found { rung, places })),
            }
        }
        Ok(None)
    }

    /// The edit with both strings decoded, when old_string has that shape and is found.
    fn decoded(
        &mut self,
        decoding: Decoding,
        old: &str,
        new: &str,
    ) -> Result<Option<Edited>, Refusal> {
        let Some(decoded_old) = decode_old(decoding, old, new) else {
            return Ok(None);
        };
        let Some(found) = self.run(&decoded_old, &Rung::ALL, Some(decoding))? else {
            return Ok(None);
        };
        let decoded_new =
            decode_new(decoding, new, &decoded_old).map_err(|problem| Refusal::Inconsistent {
                decoding,
                problem,
                line: line_numbers(self.file.text, &[found.places[0].range.start])[0],
            })?;
        if decoded_old == decoded_new {
            return Err(Refusal::Identical);
        }
        finish(
            self.file,
            &found,
            &decoded_old,
            &decoded_new,
            Some(decoding),
        )
        .map(Some)
    }

    /// The places `rung` finds; `candidates` holds the line rungs' shared starting lines once
    /// one of them has run.
    fn places(
        &mut self,
        rung: Rung,
        old: &str,
        model: &ModelText,
        candidates: &mut Option<Vec<LineSpan>>,
    ) -> Vec<Place> {
        let file = self.file;
        let mut lines = |search: &mut Search| {
            let candidates = candidates.get_or_insert_with(|| candidate_lines(file, model));
            let found = find_lines(file, model, candidates, rung.tolerance(), search.replace);
            search.nested_differently = search.nested_differently.or(found.nested_differently);
            found.places
        };
        match rung {
            Rung::Exact => substring::exact(file, old, self.replace),
            Rung::LineEndings => substring::line_endings(file, old, self.replace),
            Rung::LookAlikes => {
                if !contains_look_alike(old) && !file.has_look_alikes() {
                    return Vec::new();
                }
                let pieces = substring::look_alikes(file, old, model, self.replace);
                merge(pieces, lines(self))
            }
            Rung::CutLastLine if model.newline => Vec::new(),
            Rung::TrailingWhitespace | Rung::Indentation | Rung::BlankLines | Rung::CutLastLine => {
                lines(self)
            }
        }
    }
}

/// Places found as pieces of text, and those found as whole lines that do not overlap them.
fn merge(pieces: Vec<Place>, lines: Vec<Place>) -> Vec<Place> {
    let overlaps = |line: &Place| {
        let after = pieces.partition_point(|p| p.range.end <= line.range.start);
        pieces
            .get(after)
            .is_some_and(|p| p.range.start < line.range.end.max(line.range.start + 1))
    };
    let lines: Vec<Place> = lines.into_iter().filter(|l| !overlaps(l)).collect();
    let mut all = pieces;
    all.extend(lines);
    all.sort_by_key(|p| p.range.start);
    all
}

/// The new text for the places found.
fn finish(
    file: &FileText,
    found: &Found,
    old: &str,
    new: &str,
    decoding: Option<Decoding>,
) -> Result<Edited, Refusal> {
    let text = file.text;
    let old_model = ModelText::new(old);
    let new_model = ModelText::new(new);
    let mut ignored = Ignored::default();
    let mut kept_file_text = false;
    let mut changed = false;
    let replacements: Vec<String> = found
        .places
        .iter()
        .map(|place| {
            ignored = ignored.union(place.ignored);
            let replacement = match place.kind {
                PlaceKind::Exact => new.to_owned(),
                PlaceKind::Text | PlaceKind::Lines => {
                    let restated = restate(file, place, &old_model, &new_model);
                    kept_file_text |= restated.kept_file_text;
                    let mut replacement = restated.text;
                    if place.kind == PlaceKind::Lines {
                        keep_final_newline(text, &place.range, old_model.newline, &mut replacement);
                    }
                    replacement
                }
            };
            let replacement = file
                .eol
                .apply(&replacement, after_cr(text, &place.range))
                .into_owned();
            changed |= replacement != text[place.range.clone()];
            replacement
        })
        .collect();
    let cut_line = ignored.cut_last_line.then(|| {
        let end = found.places[0].range.end;
        line_numbers(text, &[end])[0]
    });
    let how = How {
        rung: found.rung,
        decoding,
        ignored,
        kept_file_text,
        cut_line,
    };
    if !changed {
        return Err(Refusal::Unchanged { how: Box::new(how) });
    }
    Ok(splice(text, &found.places, &replacements, how))
}

/// A forgiving match must not add or drop the file's final newline by accident.
fn keep_final_newline(
    text: &str,
    range: &Range<usize>,
    old_newline: bool,
    replacement: &mut String,
) {
    if range.end != text.len() || !old_newline {
        return;
    }
    if text.ends_with('\n') {
        if !replacement.is_empty() && !replacement.ends_with('\n') {
            replacement.push('\n');
        }
    } else if let (body, true) = split_trailing_newline(replacement) {
        let len = body.len();
        replacement.truncate(len);
    }
}

fn after_cr(text: &str, range: &Range<usize>) -> bool {
    range.start > 0 && text.as_bytes()[range.start - 1] == b'\r'
}

/// Builds the new text from sorted, disjoint places and their replacements.
fn splice(text: &str, places: &[Place], replacements: &[String], how: How) -> Edited {
    let mut out = String::with_capacity(text.len() + 64);
    let mut changes = Vec::with_capacity(places.len());
    let mut pos = 0;
    for (place, replacement) in places.iter().zip(replacements) {
        let range = &place.range;
        out.push_str(&text[pos..range.start]);
        let new_start = out.len();
        out.push_str(replacement);
        changes.push(Change {
            old: range.clone(),
            new: new_start..out.len(),
        });
        pos = range.end;
    }
    out.push_str(&text[pos..]);
    Edited {
        text: out,
        changes,
        how,
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "engine_props_tests.rs"]
mod props;

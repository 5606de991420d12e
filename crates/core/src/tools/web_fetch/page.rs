//! A fetched body made text for the model: decoded by its charset, HTML turned into
//! Markdown, anything that is not text refused.

/// Bytes of a body rein downloads at most; what follows is not fetched.
pub(crate) const MAX_BODY_BYTES: usize = 8 * 1024 * 1024;

/// Elements whose content is no reading matter.
const SKIPPED_TAGS: [&str; 9] = [
    "script", "style", "noscript", "template", "iframe", "svg", "canvas", "head", "form",
];

/// What kind of body a content type announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// HTML: converted to Markdown.
    Html,
    /// Text of another kind (plain, JSON, XML, CSS, JavaScript, Markdown): kept as it is.
    Text,
    /// Anything else (images, archives, PDFs): refused.
    Binary,
}

/// The kind of a body of `content_type` (absent: sniffed from its first bytes).
pub(crate) fn kind(content_type: Option<&str>, head: &[u8]) -> Kind {
    let Some(content_type) = content_type else {
        return sniff(head);
    };
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    match mime.as_str() {
        "text/html" | "application/xhtml+xml" => Kind::Html,
        m if m.starts_with("text/")
            || m.ends_with("+json")
            || m.ends_with("+xml")
            || matches!(
                m,
                "application/json"
                    | "application/xml"
                    | "application/javascript"
                    | "application/x-javascript"
                    | "application/ecmascript"
                    | "application/toml"
                    | "application/yaml"
                    | "application/x-yaml"
                    | "application/x-sh"
            ) =>
        {
            Kind::Text
        }
        "" | "application/octet-stream" => sniff(head),
        _ => Kind::Binary,
    }
}

fn sniff(head: &[u8]) -> Kind {
    let start = String::from_utf8_lossy(&head[..head.len().min(512)]).to_ascii_lowercase();
    if memchr::memchr(0, head).is_some() {
        Kind::Binary
    } else if start.trim_start().starts_with("<!doctype html") || start.contains("<html") {
        Kind::Html
    } else {
        Kind::Text
    }
}

/// `body` as text, by the charset its content type names (UTF-8 when it names none).
pub(crate) fn decode(body: &[u8], content_type: Option<&str>) -> String {
    let label = content_type.and_then(|ct| {
        ct.split(';')
            .filter_map(|param| param.trim().split_once('='))
            .find(|(name, _)| name.trim().eq_ignore_ascii_case("charset"))
            .map(|(_, value)| value.trim().trim_matches('"').to_owned())
    });
    let encoding = label
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// HTML as Markdown, without scripts, styles and other markup that is no reading matter.
pub(crate) fn to_markdown(html: &str) -> Result<String, String> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_TAGS.to_vec())
        .build();
    let markdown = converter
        .convert(html)
        .map_err(|e| format!("the page's HTML could not be converted: {e}"))?;
    Ok(collapse_blank_lines(&markdown))
}

/// Runs of blank lines made one, as pages full of empty containers leave them.
fn collapse_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
            out.push('\n');
        } else {
            blank_run = 0;
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_without_scripts() {
        let md = to_markdown(
            "<html><head><title>T</title><style>p{}</style></head><body><h1>Title</h1>\
             <script>alert(1)</script><p>Some <a href=\"https://x.dev/a\">link</a> and \
             <code>code</code>.</p><ul><li>one</li><li>two</li></ul></body></html>",
        )
        .unwrap();
        assert!(md.starts_with("# Title"), "{md}");
        assert!(md.contains("[link](https://x.dev/a)"), "{md}");
        assert!(md.contains("`code`"), "{md}");
        assert!(md.contains("*   one") || md.contains("- one"), "{md}");
        assert!(!md.contains("alert") && !md.contains("p{}"), "{md}");
    }

    #[test]
    fn kinds_follow_the_content_type_then_the_bytes() {
        assert_eq!(kind(Some("text/html; charset=utf-8"), b""), Kind::Html);
        assert_eq!(kind(Some("application/json"), b"{}"), Kind::Text);
        assert_eq!(kind(Some("image/png"), b"\x89PNG"), Kind::Binary);
        assert_eq!(kind(None, b"<!DOCTYPE html><html>"), Kind::Html);
        assert_eq!(kind(None, b"\0\x01"), Kind::Binary);
    }

    #[test]
    fn latin1_pages_decode() {
        assert_eq!(
            decode(b"caf\xe9", Some("text/plain; charset=ISO-8859-1")),
            "café"
        );
        assert_eq!(decode("café".as_bytes(), None), "café");
    }
}

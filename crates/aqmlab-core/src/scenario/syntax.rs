//! What to write for the TOML syntax errors a scenario's writer makes (issue 34 item 10): an
//! inline table (`{ ... }`) spread over lines, which TOML 1.0 does not allow, and whose parser
//! message ("invalid inline table", Python's "Invalid initial character for a key part") does
//! not say so. The Python front reads TOML with `tomllib` and asks [`hint`] for the same words.

/// The hint for the syntax error in `text`, if the toml crate's reading of it has one.
pub fn hint(text: &str) -> Option<String> {
    let error = text.parse::<toml::Table>().err()?;
    error_hint(text, &error)
}

/// The hint for `error`, the toml crate's reading of `text`.
pub(super) fn error_hint(text: &str, error: &toml::de::Error) -> Option<String> {
    let at = error.span()?.start.min(text.len());
    // The parser points at the line's end, or at the comma before it.
    let rest_of_line = without_comment(text[at..].lines().next().unwrap_or(""));
    let newline_in_table = error.message().starts_with("invalid inline table")
        && rest_of_line.trim().trim_start_matches(',').trim().is_empty();
    newline_in_table.then(|| {
        let form = match open_value(&text[..at]) {
            Some(Open::Table(path)) => format!("write it as the table [{path}]"),
            Some(Open::ArrayOfTables(path)) => format!("write each table of the list as [[{path}]]"),
            None => "write it as a [table]".into(),
        };
        format!("TOML's inline tables {{ ... }} are one line; over several lines, {form}, one `key = value` a line")
    })
}

/// The outermost value still open at the end of `before`, where an inline table's line ended.
enum Open {
    /// `key = {` under `[header]`: the table `header.key`.
    Table(String),
    /// `key = [ {` under `[header]`: an array of tables `header.key`.
    ArrayOfTables(String),
}

/// Which value is open at the end of `text`, with the path a `[table]` header gives it; None if
/// its key is not a plain one (`"a b" = {`).
fn open_value(text: &str) -> Option<Open> {
    let mut header = String::new();
    // The brackets open at this point, and the key of the outermost.
    let mut open: Vec<char> = Vec::new();
    let mut outermost_key = String::new();
    for line in text.split('\n') {
        let code = without_comment(line);
        if open.is_empty() && code.trim_start().starts_with('[') {
            header = code.trim().trim_matches(['[', ']']).trim().to_string();
            continue;
        }
        let mut in_string: Option<char> = None;
        let mut escaped = false;
        for (i, c) in code.char_indices() {
            match (in_string, c) {
                (Some('"'), '\\') if !escaped => {
                    escaped = true;
                    continue;
                }
                (Some(quote), c) if c == quote && !escaped => in_string = None,
                (Some(_), _) => {}
                (None, '"' | '\'') => in_string = Some(c),
                (None, '{' | '[') => {
                    if open.is_empty() {
                        outermost_key = code[..i].trim_end().strip_suffix('=')?.trim().to_string();
                    }
                    open.push(c);
                }
                (None, '}' | ']') => {
                    open.pop();
                }
                _ => {}
            }
            escaped = false;
        }
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-.".contains(c);
    if outermost_key.is_empty() || !outermost_key.chars().all(plain) {
        return None;
    }
    let path = if header.is_empty() {
        outermost_key
    } else {
        format!("{header}.{outermost_key}")
    };
    match open.first()? {
        '{' => Some(Open::Table(path)),
        _ => Some(Open::ArrayOfTables(path)),
    }
}

/// A line without its comment (a `#` outside strings).
fn without_comment(line: &str) -> &str {
    let mut in_string: Option<char> = None;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match (in_string, c) {
            (Some('"'), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(quote), c) if c == quote && !escaped => in_string = None,
            (None, '"' | '\'') => in_string = Some(c),
            (None, '#') => return &line[..i],
            _ => {}
        }
        escaped = false;
    }
    line
}

#[cfg(test)]
mod tests {
    use super::hint;

    #[test]
    fn an_inline_table_over_lines_is_shown_as_a_table() {
        let text =
            "[topology]\ntype = \"dumbbell\"\nbottleneck = { rate = \"10Mbps\",  # the link\n  delay = \"5ms\" }\n";
        assert_eq!(
            hint(text).unwrap(),
            "TOML's inline tables { ... } are one line; over several lines, write it as the table \
             [topology.bottleneck], one `key = value` a line"
        );
        let text = "[topology]\nbottleneck = {\n  rate = \"10Mbps\" }\n";
        assert!(hint(text).unwrap().contains("[topology.bottleneck]"));
        // Nested: the outermost is the one to write as a table.
        let text = "[[flows]]\ntcp = { profile = \"ns2\", workload = { type = \"web\",\n } }\n";
        assert!(hint(text).unwrap().contains("[flows.tcp]"));
    }

    #[test]
    fn an_inline_table_over_lines_in_an_array_is_an_array_of_tables() {
        // A list of one-line tables may span lines; a table in it may not.
        let text =
            "[topology]\nlinks = [\n  { from = \"A\", to = \"B\" },\n  { from = \"B\", # next\n    to = \"C\" },\n]\n";
        assert_eq!(
            hint(text).unwrap(),
            "TOML's inline tables { ... } are one line; over several lines, write each table of the \
             list as [[topology.links]], one `key = value` a line"
        );
        assert_eq!(
            hint("[topology]\nlinks = [\n  { from = \"A\", to = \"B\" },\n]\n"),
            None
        );
    }

    #[test]
    fn other_syntax_errors_have_no_hint() {
        // A trailing comma is not a newline: the parser's own message says enough.
        assert_eq!(hint("[topology]\nbottleneck = { rate = \"10Mbps\", }\n"), None);
        assert_eq!(hint("duration = \n"), None);
        // A brace in a string or a comment is not a table.
        let text = "name = \"a { b\" # {\nbottleneck = { rate = \"1Mbps\",\n }\n";
        assert!(hint(text).unwrap().contains("as the table [bottleneck]"));
    }
}

//! The layer rule checks itself (issue 36): ARCHITECTURE.md's "Layers" table gives each module of
//! the crate its layer, and every path in `src/` that names a module of the crate (`crate::`,
//! `super::`, `self::`, or a child module by name; comments and literals left out) must name one
//! of its own layer or a layer before it. Within a layer, and among the modules of any folder
//! (`qdisc/`'s files, `transport/tcp/`'s), a module may use another but never round a circle:
//! what two twins share lives in a third module, not inside one of them. A file's unit tests
//! (its `#[cfg(test)] mod tests`) stand above its folder, as nothing uses them: they may use the
//! folder's test harness (`testing.rs`), which uses the modules it drives. A path that starts from
//! a name a `use` brought in is counted at that `use`; an item a module re-exports (`pub use`)
//! counts as the module that defines it; `lib.rs` declares the modules and holds no code itself.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

/// A module by its path from the crate root: `["qdisc", "codel"]`; `[]` is the root.
type ModPath = Vec<String>;

/// Where a reference is written, for the failure message: `src/qdisc/sfq.rs:15`.
type Site = String;

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
const ARCHITECTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ARCHITECTURE.md");

/// `text` with every comment, string and character literal blanked to spaces (newlines kept, so
/// lines still count), so that only code is left.
fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let at = |i: usize| chars.get(i).copied().unwrap_or('\0');
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let (c, next) = (chars[i], at(i + 1));
        let start = i;
        if c == '/' && next == '/' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == '*' {
            let mut depth = 0;
            while i < chars.len() {
                if at(i) == '/' && at(i + 1) == '*' {
                    depth += 1;
                    i += 2;
                } else if at(i) == '*' && at(i + 1) == '/' {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == 'r' && (next == '"' || next == '#') && (i == 0 || !is_ident(at(i - 1)) || at(i - 1) == 'b') {
            // A raw string r"…" or r#"…"# (not a raw identifier r#name).
            let hashes = (i + 1..).take_while(|&j| at(j) == '#').count();
            if at(i + 1 + hashes) != '"' {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            i += 2 + hashes;
            while i < chars.len() && !chars[i..].iter().take(close.len()).copied().eq(close.chars()) {
                i += 1;
            }
            i += close.len();
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' && (next == '\\' || at(i + 2) == '\'') {
            // A character literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
            continue;
        }
        out.extend(chars[start..i.min(chars.len())].iter().map(|&c| blank(c)));
    }
    out
}

/// A token of code: an identifier or one punctuation character (`::` as one), with its line.
#[derive(Clone, Debug, PartialEq)]
struct Token {
    text: String,
    line: usize,
}

fn tokens(code: &str) -> Vec<Token> {
    let chars: Vec<char> = code.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Token {
                text: chars[start..i].iter().collect(),
                line,
            });
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push(Token {
                text: "::".into(),
                line,
            });
            i += 2;
        } else {
            out.push(Token { text: c.into(), line });
            i += 1;
        }
    }
    out
}

/// One path written in a `use` (expanded from its braces) or in code: its segments, the name it
/// is imported as (for a `pub use`), and its line.
#[derive(Debug)]
struct PathRef {
    segments: Vec<String>,
    alias: Option<String>,
    line: usize,
    /// Written in a `pub use` (or `pub(crate) use`): the module re-exports it.
    exported: bool,
    /// Written inside a `#[cfg(test)]` inline module.
    in_test: bool,
}

/// Expands the use tree starting at `tokens[i]` under `prefix` into `out`; returns the index
/// after it.
fn use_tree(tokens: &[Token], mut i: usize, prefix: &[String], exported: bool, out: &mut Vec<PathRef>) -> usize {
    let mut segments = prefix.to_vec();
    let mut alias = None;
    let mut line = tokens[i].line;
    while i < tokens.len() {
        match tokens[i].text.as_str() {
            "::" => i += 1,
            "{" => {
                i += 1;
                while tokens[i].text != "}" {
                    i = use_tree(tokens, i, &segments, exported, out);
                    if tokens[i].text == "," {
                        i += 1;
                    }
                }
                return i + 1;
            }
            "*" => {
                i += 1;
                break;
            }
            "as" => {
                alias = Some(tokens[i + 1].text.clone());
                i += 2;
                break;
            }
            text if text.starts_with(|c: char| c.is_alphanumeric() || c == '_') => {
                segments.push(text.to_string());
                line = tokens[i].line;
                i += 1;
            }
            _ => break,
        }
    }
    out.push(PathRef {
        segments,
        alias,
        line,
        exported,
        in_test: false,
    });
    i
}

/// A source file: its module, and the paths it writes, each with the module (maybe an inline
/// one, `mod tests { … }`) it is written in.
struct Source {
    file: String,
    module: ModPath,
    paths: Vec<(ModPath, PathRef)>,
    /// Macros it exports at the crate root (`#[macro_export] macro_rules! name`).
    exported_macros: Vec<String>,
}

fn read_source(root: &Path, file: &Path) -> Source {
    let relative = file.strip_prefix(root).unwrap();
    let mut module: ModPath = relative.iter().map(|s| s.to_str().unwrap().to_string()).collect();
    let last = module.pop().unwrap();
    if !matches!(last.as_str(), "mod.rs" | "lib.rs") {
        module.push(last.trim_end_matches(".rs").to_string());
    }
    let text = fs::read_to_string(file).unwrap();
    let tokens = tokens(&code_of(&text));
    let text_at = |i: usize| tokens.get(i).map_or("", |t: &Token| t.text.as_str());
    let mut paths = Vec::new();
    let mut exported_macros = Vec::new();
    // The inline modules open around the current token: name, brace depth inside, cfg(test).
    let mut inline: Vec<(String, usize, bool)> = Vec::new();
    let mut depth = 0;
    let mut i = 0;
    while i < tokens.len() {
        let current: ModPath = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(m, _, _)| m.clone()))
            .collect();
        let in_test = inline.iter().any(|&(_, _, test)| test);
        match text_at(i) {
            "mod" if text_at(i + 2) == "{" => {
                let attribute: Vec<&str> = tokens[i.saturating_sub(7)..i].iter().map(|t| t.text.as_str()).collect();
                let test = attribute.ends_with(&["#", "[", "cfg", "(", "test", ")", "]"]);
                inline.push((text_at(i + 1).to_string(), depth + 1, test));
                i += 2;
            }
            "{" => {
                depth += 1;
                i += 1;
            }
            "}" => {
                if inline.last().is_some_and(|&(_, d, _)| d == depth) {
                    inline.pop();
                }
                depth -= 1;
                i += 1;
            }
            "macro_rules" if tokens[i.saturating_sub(6)..i].iter().any(|t| t.text == "macro_export") => {
                exported_macros.push(text_at(i + 2).to_string());
                i += 1;
            }
            "use" => {
                // `pub use`, `pub(crate) use`: a re-export.
                let exported = text_at(i.wrapping_sub(1)) == "pub" || text_at(i.wrapping_sub(1)) == ")";
                let mut refs = Vec::new();
                i = use_tree(&tokens, i + 1, &[], exported, &mut refs);
                paths.extend(refs.into_iter().map(|r| (current.clone(), PathRef { in_test, ..r })));
            }
            first
                if text_at(i + 1) == "::"
                    && text_at(i.wrapping_sub(1)) != "$"
                    && text_at(i.wrapping_sub(1)) != "::" =>
            {
                let mut segments = vec![first.to_string()];
                let mut j = i + 1;
                while text_at(j) == "::" && text_at(j + 1).starts_with(|c: char| c.is_alphanumeric() || c == '_') {
                    segments.push(text_at(j + 1).to_string());
                    j += 2;
                }
                let line = tokens[i].line;
                let (alias, exported) = (None, false);
                paths.push((
                    current,
                    PathRef {
                        segments,
                        alias,
                        line,
                        exported,
                        in_test,
                    },
                ));
                i = j;
            }
            _ => i += 1,
        }
    }
    Source {
        file: format!("src/{}", relative.display()),
        module,
        paths,
        exported_macros,
    }
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every module of the crate and the paths written in it, resolved to the modules they name.
struct Crate {
    sources: Vec<Source>,
    modules: BTreeSet<ModPath>,
    /// (module, name) → the module defining what it re-exports under that name.
    reexports: HashMap<(ModPath, String), ModPath>,
    /// Macros exported at the root → the module defining them.
    macros: HashMap<String, ModPath>,
}

/// A path from one module of the crate to another, and where it is written.
struct Reference {
    from: ModPath,
    to: Target,
    site: Site,
    /// In a file's unit tests.
    in_test: bool,
}

/// What a path names: the module holding what it names, or an item defined in `lib.rs`.
#[derive(Debug, PartialEq)]
enum Target {
    Module(ModPath),
    RootItem(String),
}

impl Crate {
    fn read() -> Crate {
        let root = Path::new(SRC);
        let mut files = Vec::new();
        rust_files(root, &mut files);
        files.sort();
        let sources: Vec<Source> = files.iter().map(|f| read_source(root, f)).collect();
        let modules = sources.iter().map(|s| s.module.clone()).collect();
        let macros = sources
            .iter()
            .flat_map(|s| s.exported_macros.iter().map(|m| (m.clone(), s.module.clone())))
            .collect();
        let mut krate = Crate {
            sources,
            modules,
            reexports: HashMap::new(),
            macros,
        };
        let mut reexports = HashMap::new();
        for source in &krate.sources {
            for (within, path) in source.paths.iter().filter(|(_, p)| p.exported) {
                if let Some(Target::Module(to)) = krate.resolve_module(within, &path.segments) {
                    let name = path
                        .alias
                        .clone()
                        .unwrap_or_else(|| path.segments.last().unwrap().clone());
                    reexports.insert((source.module.clone(), name), to);
                }
            }
        }
        krate.reexports = reexports;
        krate
    }

    /// The module `segments` (written inside module `within`) names, walking child modules as
    /// far as they go; None for a path outside the crate (`std::`, `serde::`, a local name).
    fn resolve_module(&self, within: &ModPath, segments: &[String]) -> Option<Target> {
        let mut base = match segments.first()?.as_str() {
            "crate" => vec![],
            "super" => within[..within.len() - 1].to_vec(),
            "self" => within.clone(),
            child
                if self
                    .modules
                    .contains(&[within.as_slice(), &[child.to_string()]].concat()) =>
            {
                within.clone()
            }
            _ => return None,
        };
        let start = usize::from(matches!(segments[0].as_str(), "crate" | "super" | "self"));
        for segment in &segments[start..] {
            match segment.as_str() {
                "super" => {
                    base.pop();
                }
                "self" => {}
                name => {
                    let child = [base.as_slice(), &[name.to_string()]].concat();
                    if self.modules.contains(&child) {
                        base = child;
                        continue;
                    }
                    if let Some(defined) = self.reexports.get(&(base.clone(), name.to_string())) {
                        return Some(Target::Module(defined.clone()));
                    }
                    if base.is_empty() {
                        return Some(match self.macros.get(name) {
                            Some(defined) => Target::Module(defined.clone()),
                            None => Target::RootItem(name.to_string()),
                        });
                    }
                    break;
                }
            }
        }
        Some(Target::Module(base))
    }

    /// Every reference from one module of the crate to another: (from, to, site).
    fn references(&self) -> Vec<Reference> {
        let mut out = Vec::new();
        for source in &self.sources {
            for (within, path) in &source.paths {
                if let Some(to) = self.resolve_module(within, &path.segments) {
                    out.push(Reference {
                        from: source.module.clone(),
                        to,
                        site: format!("{}:{}", source.file, path.line),
                        in_test: path.in_test,
                    });
                }
            }
        }
        out
    }
}

/// ARCHITECTURE.md's "Layers" table: each top-level module's layer (1 = vocabulary).
fn layers() -> BTreeMap<String, u32> {
    let text = fs::read_to_string(ARCHITECTURE).unwrap();
    let section = text
        .split("\n## Layers")
        .nth(1)
        .expect("ARCHITECTURE.md has a Layers section");
    let section = section.split("\n## ").next().unwrap();
    let mut layers = BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let Some(Ok(layer)) = cells[1].split('.').next().map(str::parse::<u32>) else {
            continue;
        };
        for name in cells[2].split('`').skip(1).step_by(2) {
            let module = name.trim_end_matches("/*").to_string();
            assert!(
                layers.insert(module.clone(), layer).is_none(),
                "{module} is in two layers"
            );
        }
    }
    layers
}

/// The strongly connected parts of more than one node of `graph` (Tarjan's algorithm): the
/// circles.
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: HashMap<&'g str, usize>,
        low: HashMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, node: &'g str) {
            let n = self.index.len();
            self.index.insert(node, n);
            self.low.insert(node, n);
            self.stack.push(node);
            for next in self.graph.get(node).into_iter().flatten() {
                if !self.index.contains_key(next.as_str()) {
                    self.visit(next);
                    self.low.insert(node, self.low[node].min(self.low[next.as_str()]));
                } else if self.stack.contains(&next.as_str()) {
                    self.low.insert(node, self.low[node].min(self.index[next.as_str()]));
                }
            }
            if self.low[node] == self.index[node] {
                let at = self.stack.iter().position(|&m| m == node).unwrap();
                let part: Vec<String> = self.stack.drain(at..).map(String::from).collect();
                if part.len() > 1 {
                    self.found.push(part);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: HashMap::new(),
        low: HashMap::new(),
        stack: Vec::new(),
        found: Vec::new(),
    };
    for node in graph.keys() {
        if !walk.index.contains_key(node.as_str()) {
            walk.visit(node);
        }
    }
    walk.found
}

fn shown(module: &[String]) -> String {
    if module.is_empty() {
        "the crate root".into()
    } else {
        module.join("::")
    }
}

#[test]
fn no_module_uses_a_later_layer_or_uses_a_sibling_round_a_circle() {
    let layers = layers();
    let krate = Crate::read();
    let layer_of = |module: &ModPath| module.first().and_then(|m| layers.get(m)).copied();
    let mut broken = Vec::new();

    // The table names every module lib.rs declares, and lib.rs declares them in the table's order.
    let declared: Vec<ModPath> = krate.modules.iter().filter(|m| m.len() == 1).cloned().collect();
    for module in &declared {
        if layer_of(module).is_none() {
            broken.push(format!(
                "ARCHITECTURE.md's Layers table does not name module `{}`",
                module[0]
            ));
        }
    }
    for module in layers.keys() {
        if !declared.contains(&vec![module.clone()]) {
            broken.push(format!(
                "ARCHITECTURE.md's Layers table names `{module}`, which src/ has not"
            ));
        }
    }
    let lib = fs::read_to_string(Path::new(SRC).join("lib.rs")).unwrap();
    let order: Vec<u32> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .filter_map(|m| layers.get(m.trim_end_matches(';')).copied())
        .collect();
    if !order.is_sorted() {
        broken.push(format!(
            "lib.rs declares the modules out of layer order: layers {order:?}"
        ));
    }

    // Upward references, and each folder's graph of which child uses which.
    let references = krate.references();
    let paths = references.len();
    let mut siblings: BTreeMap<ModPath, BTreeMap<String, BTreeSet<String>>> = BTreeMap::new();
    let mut sites: BTreeMap<(ModPath, String, String), BTreeSet<Site>> = BTreeMap::new();
    for Reference {
        from,
        to,
        site,
        in_test,
    } in references
    {
        let to = match to {
            Target::Module(to) => to,
            Target::RootItem(name) => {
                broken.push(format!(
                    "{site}: crate::{name} is defined in lib.rs, which only declares the layers: move it into one"
                ));
                continue;
            }
        };
        if from.is_empty() {
            continue; // lib.rs: its declarations and re-exports
        }
        if let (Some(a), Some(b)) = (layer_of(&from), layer_of(&to)) {
            if b > a {
                broken.push(format!(
                    "{site}: {} (layer {a}) uses {} (layer {b}), a later layer",
                    shown(&from),
                    shown(&to)
                ));
            }
        }
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        // Between two layers only an upward use can close a circle, and it is reported above.
        let across_layers = common == 0 && layer_of(&from) != layer_of(&to);
        if from.len() > common && to.len() > common && !in_test && !across_layers {
            let folder = from[..common].to_vec();
            let (a, b) = (from[common].clone(), to[common].clone());
            siblings
                .entry(folder.clone())
                .or_default()
                .entry(a.clone())
                .or_default()
                .insert(b.clone());
            sites.entry((folder, a, b)).or_default().insert(site);
        }
    }
    let mut circle_count = 0;
    for (folder, graph) in &siblings {
        for circle in circles(graph) {
            circle_count += 1;
            let mut lines = vec![format!(
                "circle among the modules of {}: {}",
                shown(folder),
                circle.join(", ")
            )];
            for a in &circle {
                for b in graph[a].iter().filter(|b| circle.contains(b)) {
                    let at = &sites[&(folder.clone(), a.clone(), b.clone())];
                    lines.push(format!(
                        "    {a} uses {b} at {}",
                        Vec::from_iter(at.iter().cloned()).join(", ")
                    ));
                }
            }
            broken.push(lines.join("\n"));
        }
    }
    let edges: usize = siblings.values().flat_map(|g| g.values()).map(BTreeSet::len).sum();
    eprintln!(
        "layers: {} files, {paths} paths into the crate, {edges} uses between sibling modules; \
         {} broken rules ({circle_count} circles)",
        krate.sources.len(),
        broken.len()
    );
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn comments_and_literals_are_not_code() {
    let text = "use crate::a; // crate::b\n/* crate::c /* nested */ crate::d */ let s = \"crate::e\";\n\
                let r = r#\"crate::f \"quoted\"\"#; let c = '\"'; fn f<'a>(x: &'a str) { crate::g::h(x) }";
    let code = code_of(text);
    assert_eq!(code.lines().count(), 3, "newlines are kept");
    let named: Vec<&str> = ["a", "b", "c", "d", "e", "f", "g"]
        .into_iter()
        .filter(|n| code.contains(&format!("crate::{n}")))
        .collect();
    assert_eq!(named, ["a", "g"]);
}

#[test]
fn a_use_tree_expands_to_every_path_it_names() {
    let tokens = tokens("crate::qdisc::{self, codel::{Params as P, Vars}, sfq::*};");
    let mut paths = Vec::new();
    use_tree(&tokens, 0, &[], false, &mut paths);
    let shown: Vec<(String, Option<String>)> = paths.iter().map(|p| (p.segments.join("::"), p.alias.clone())).collect();
    assert_eq!(
        shown,
        [
            ("crate::qdisc::self".to_string(), None),
            ("crate::qdisc::codel::Params".to_string(), Some("P".to_string())),
            ("crate::qdisc::codel::Vars".to_string(), None),
            ("crate::qdisc::sfq".to_string(), None),
        ]
    );
}

#[test]
fn a_circle_is_found_and_a_chain_is_not() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry(a.to_string()).or_default().insert(b.to_string());
        }
        g
    };
    assert_eq!(circles(&graph(&[("a", "b"), ("b", "c")])), Vec::<Vec<String>>::new());
    let mut found = circles(&graph(&[("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]));
    found[0].sort();
    assert_eq!(found, [["a", "b", "c"]]);
}

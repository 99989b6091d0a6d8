//! Every name the macros invent, in one place: the client and tool types, their methods, the
//! procedure-name rule, and how a type is printed into the spec.

use proc_macro2::{Ident, Span};
use quote::format_ident;

/// The longest tool name MCP clients accept (the runtime's composition refuses longer ones).
pub const MAX_TOOL_NAME: usize = 64;

/// Words that cannot be a member, namespace or verb, not even as raw identifiers.
const UNUSABLE: &[&str] = &["self", "Self", "super", "crate", "_"];

/// `Ops` → `OpsClient`
pub fn client(surface: &Ident) -> Ident {
    format_ident!("{}Client", surface)
}

/// `count` → `CountTool`, `spawn_and_wait` → `SpawnAndWaitTool`
pub fn tool(function: &Ident) -> Ident {
    let camel = camel(function.to_string().trim_start_matches("r#"));
    format_ident!("{}Tool", camel, span = function.span())
}

/// `summary` → `SummaryPrompt`
pub fn prompt(function: &Ident) -> Ident {
    let camel = camel(function.to_string().trim_start_matches("r#"));
    format_ident!("{}Prompt", camel, span = function.span())
}

/// `Ops` → `OpsProcedures`
pub fn procedures(surface: &Ident) -> Ident {
    format_ident!("{}Procedures", surface)
}

/// `Ops` + `proc` → `OpsProcNamespace`; `a.b_c` → `OpsABCNamespace`
pub fn namespace(surface: &Ident, ns: &str) -> Ident {
    format_ident!("{}{}Namespace", surface, camel(ns))
}

/// What a borrowed `elem` (behind `&`) most likely means when it has to be owned: `str` →
/// `String`, `[T]` → `Vec<T>`, anything else itself. As written in a message, and as the type
/// the expansion reads it as (absolute paths, spanned at `elem`).
pub fn owned(elem: &syn::Type) -> (String, syn::Type) {
    use syn::spanned::Spanned;
    let span = elem.span();
    match elem {
        syn::Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => (
            "String".to_owned(),
            syn::parse_quote_spanned!(span=> ::std::string::String),
        ),
        syn::Type::Slice(s) => {
            let item = &s.elem;
            (
                format!("Vec<{}>", rust_name(item)),
                syn::parse_quote_spanned!(span=> ::std::vec::Vec<#item>),
            )
        }
        other => (rust_name(other), other.clone()),
    }
}

/// The type a smart pointer holds (`Arc<C>`, `Rc<C>`, `Box<C>` → `C`), if `ty` is one.
pub fn pointee(ty: &syn::Type) -> Option<syn::Type> {
    let syn::Type::Path(p) = ty else { return None };
    let last = p.path.segments.last()?;
    if !["Arc", "Rc", "Box"].contains(&last.ident.to_string().as_str()) {
        return None;
    }
    let syn::PathArguments::AngleBracketed(a) = &last.arguments else {
        return None;
    };
    match a.args.first()? {
        syn::GenericArgument::Type(t) if a.args.len() == 1 => Some(t.clone()),
        _ => None,
    }
}

/// `ty` printed as a person writes it (`&'static str`, `Vec<u32>`, `BTreeMap<K, V>`): the
/// token stream's own printing spaces every token, and removing the spaces glues words.
pub fn rust_name(ty: &syn::Type) -> String {
    let mut out = String::new();
    print_tokens(quote::ToTokens::to_token_stream(ty), &mut out);
    out
}

fn print_tokens(tokens: proc_macro2::TokenStream, out: &mut String) {
    use proc_macro2::{Delimiter, Spacing, TokenTree};
    // Whether the last token was a word (ident, literal or lifetime): two words need a space.
    let mut word = false;
    let mut joint = false;
    for tt in tokens {
        match tt {
            TokenTree::Ident(i) => {
                if word {
                    out.push(' ');
                }
                out.push_str(&i.to_string());
                word = true;
            }
            TokenTree::Literal(l) => {
                if word {
                    out.push(' ');
                }
                out.push_str(&l.to_string());
                word = true;
            }
            TokenTree::Punct(p) => {
                let c = p.as_char();
                match c {
                    ',' | ';' => out.push_str(&format!("{c} ")),
                    '+' | '=' => out.push_str(&format!(" {c} ")),
                    '-' if p.spacing() == Spacing::Joint => out.push_str(" -"),
                    '>' if joint && out.ends_with(" -") => out.push_str("> "),
                    _ => out.push(c),
                }
                joint = p.spacing() == Spacing::Joint;
                // After any punct (`'` of `'a` included) the next word needs no space.
                word = false;
            }
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                if word && g.delimiter() == Delimiter::Brace {
                    out.push(' ');
                }
                out.push_str(open);
                print_tokens(g.stream(), out);
                out.push_str(close);
                word = g.delimiter() == Delimiter::None;
            }
        }
    }
}

/// `a.b_c` → `ABC`, `spawn_and_wait` → `SpawnAndWait`
fn camel(words: &str) -> String {
    words
        .split(['.', '_'])
        .map(|seg| {
            let mut chars = seg.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Whether `word` can name a member, namespace or verb (as a raw identifier if need be).
pub fn usable(word: &str) -> bool {
    !UNUSABLE.contains(&word)
}

/// A method or field name for a member, namespace or verb (`a.b` → `a_b`; keywords become raw
/// identifiers). `word` must be [`usable`].
pub fn method(word: &str, span: Span) -> Ident {
    let word = word.replace('.', "_");
    match syn::parse_str::<Ident>(&word) {
        Ok(_) => Ident::new(&word, span),
        Err(_) => Ident::new_raw(&word, span),
    }
}

/// Whether `name` is a valid procedure name, `"<ns>.<verb>"`: dot-separated segments, each a
/// letter followed by letters, digits and single inner underscores. Answers why not (the
/// caller says what to write).
pub fn check_procedure_name(name: &str) -> Result<(), String> {
    if name.contains(char::is_whitespace) {
        return Err(format!(
            "procedure name \"{name}\" has a space: a name is \"<ns>.<verb>\", segments joined by dots"
        ));
    }
    let Some((ns, verb)) = name.rsplit_once('.') else {
        return Err(format!(
            "procedure name \"{name}\" needs a namespace and a verb, \"<ns>.<verb>\""
        ));
    };
    if ns.is_empty() {
        return Err(format!("procedure name \"{name}\" has an empty namespace"));
    }
    if verb.is_empty() {
        return Err(format!("procedure name \"{name}\" has an empty verb"));
    }
    for seg in name.split('.') {
        if seg.is_empty() {
            return Err(format!(
                "procedure name \"{name}\" has an empty segment between dots"
            ));
        }
        let ok = seg.starts_with(|c: char| c.is_ascii_alphabetic())
            && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !seg.contains("__")
            && !seg.ends_with('_');
        if !ok {
            return Err(format!(
                "procedure name \"{name}\" has an illegal segment \"{seg}\": each segment is a letter followed by letters, digits and single underscores"
            ));
        }
        if !usable(seg) {
            return Err(format!(
                "procedure name \"{name}\" has the reserved segment \"{seg}\": it cannot name a client method"
            ));
        }
    }
    Ok(())
}

/// The valid name most likely meant by `written`, which is not one, on a method named `verb`
/// (`"proc kill"` → `"proc.kill"`, `"proc."` → `"proc.<verb>"`, `"proc_kill"` → `"proc.kill"`),
/// and whether its namespace had to be invented (`ns`: nothing written names one).
pub fn guess_procedure_name(written: &str, verb: &str, ns: &str) -> (String, bool) {
    // Spaces and other separators become dots; characters a segment cannot hold go.
    let mut cleaned = String::new();
    for c in written.trim().chars() {
        match c {
            c if c.is_ascii_alphanumeric() || c == '_' => cleaned.push(c),
            '-' => cleaned.push('_'),
            _ => cleaned.push('.'),
        }
    }
    let segments: Vec<String> = cleaned
        .split('.')
        .map(|s| s.trim_matches('_').replace("__", "_"))
        .filter(|s| !s.is_empty())
        .collect();
    let ends_with_dot = written.trim_end().ends_with('.');
    let starts_with_dot = written.trim_start().starts_with('.');
    let (guess, invented) = match segments.as_slice() {
        [] => (format!("{ns}.{verb}"), true),
        // `"proc."`: the verb is the method's name.
        [only] if ends_with_dot => (format!("{only}.{verb}"), false),
        [only] if starts_with_dot => (format!("{ns}.{only}"), true),
        // `"proc_kill"`, the tool name: the namespace is what comes before the first `_`.
        [only] => match only.split_once('_') {
            Some((n, v)) if !n.is_empty() && !v.is_empty() => (format!("{n}.{v}"), true),
            _ => (format!("{ns}.{only}"), true),
        },
        many => (many.join("."), false),
    };
    if check_procedure_name(&guess).is_ok() {
        (guess, invented)
    } else {
        (format!("{ns}.{verb}"), true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn procedure_names() {
        assert!(check_procedure_name("proc.spawn").is_ok());
        assert!(check_procedure_name("a.b.c").is_ok());
        assert!(
            check_procedure_name(".spawn")
                .unwrap_err()
                .contains("empty namespace")
        );
        assert!(check_procedure_name("proc.").unwrap_err().contains("empty verb"));
        assert!(
            check_procedure_name("spawn")
                .unwrap_err()
                .contains("needs a namespace")
        );
        assert!(check_procedure_name("proc kill").unwrap_err().contains("a space"));
        assert!(
            check_procedure_name("proc.sp-awn")
                .unwrap_err()
                .contains("illegal segment")
        );
        assert!(check_procedure_name("a__b.c").is_err());
    }

    #[test]
    fn guessed_procedure_names() {
        let guess = |w: &str| guess_procedure_name(w, "zero", "ops");
        assert_eq!(guess("load.zero"), ("load.zero".to_owned(), false));
        assert_eq!(guess("load zero"), ("load.zero".to_owned(), false));
        assert_eq!(guess("load."), ("load.zero".to_owned(), false));
        assert_eq!(guess(".zero"), ("ops.zero".to_owned(), true));
        assert_eq!(guess("load_zero"), ("load.zero".to_owned(), true));
        assert_eq!(guess("zero"), ("ops.zero".to_owned(), true));
        assert_eq!(guess("proc.sp-awn"), ("proc.sp_awn".to_owned(), false));
        assert_eq!(guess(""), ("ops.zero".to_owned(), true));
    }

    #[test]
    fn generated_names() {
        assert_eq!(
            namespace(&format_ident!("Ops"), "proc").to_string(),
            "OpsProcNamespace"
        );
        assert!(check_procedure_name("proc.self").is_err());
    }

    #[test]
    fn types_print_as_written() {
        let name = |t: &str| rust_name(&syn::parse_str::<syn::Type>(t).unwrap());
        assert_eq!(name("&'static str"), "&'static str");
        assert_eq!(name("Vec<u32>"), "Vec<u32>");
        assert_eq!(
            name("std::collections::BTreeMap<String, Vec<u8>>"),
            "std::collections::BTreeMap<String, Vec<u8>>"
        );
        assert_eq!(name("(u32, [u8; 4])"), "(u32, [u8; 4])");
        assert_eq!(
            name("Box<dyn Fn(u32) -> u32 + Send>"),
            "Box<dyn Fn(u32) -> u32 + Send>"
        );
        assert_eq!(name("&'a mut T"), "&'a mut T");
    }
}

//! `skill!`: a skill (the MCP skills extension) over one expose map, checked at compile time.
//!
//! Accepts `skill!(EXPOSE { name: "triage", description: "…", uses: [load, "proc.kill"],
//! instructions: include_str!("skills/triage.md") })` (`uses` optional, the fields in any
//! order). Pipeline: [`parse`](SkillInput::parse) (a sentence for every malformed shape) →
//! validate what this macro sees alone (a missing or repeated field, an unknown word, the
//! name against the Agent Skills rules, an empty or overlong description, a key used twice)
//! → expand.
//!
//! Each key is looked up in the map's entries by const evaluation, spanned at the key, with
//! the lookup and suggestion of `expose!`'s keys:
//!
//! ```text
//! const _: () = if let Some(why) = exposed_problem("EXPOSE", ENTRIES, "proc.kil", true) { panic!("{}", why.as_str()) };
//! ```
//!
//! so a key the map does not expose (a typo, or a procedure left unexposed) is one error at
//! the key, naming the map and the closest key it exposes as that kind (a quoted key is a
//! procedure's, a tool; a bare one a member's, a resource). A field in error is left out of
//! the expansion, which still builds the skill so code naming it does not fail too.

use crate::errors::{Errors, unknown_word};
use crate::tokens::{ExposeKey, Shape, expose_key, head_and_items};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, LitStr, Path, Token, bracketed};

const FIELDS: &[&str] = &["name", "description", "uses", "instructions"];
/// The whole form, for messages about its shape.
const FORM: &str = "write `skill!(EXPOSE { name: \"triage\", description: \"…\", uses: [load, \"proc.kill\"], instructions: include_str!(\"triage.md\") })`";
/// The Agent Skills limits.
const NAME_MAX: usize = 64;
const DESCRIPTION_MAX: usize = 1024;

pub struct SkillInput {
    map: Path,
    fields: Vec<Field>,
}

struct Field {
    word: Ident,
    value: Value,
}

enum Value {
    Text(LitStr),
    Keys(Vec<ExposeKey>),
    Expr(Box<Expr>),
}

impl Parse for SkillInput {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let shape = Shape {
            empty: format!("`skill!` needs an expose map and the skill's fields: {FORM}"),
            head: format!("`skill!` starts with the expose map it uses: {FORM}"),
            braces: format!("after the expose map come the skill's fields in braces: {FORM}"),
            items: "fields",
            after: format!(
                "`skill!` takes one expose map and its fields, nothing after the braces: remove this ({FORM})"
            ),
        };
        let (map, fields) = head_and_items(input, &shape)?;
        Ok(SkillInput { map, fields })
    }
}

impl Parse for Field {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let word: Ident = input.call(Ident::parse_any).map_err(|e| {
            syn::Error::new(
                e.span(),
                "expected a field: `name`, `description`, `uses` or `instructions`",
            )
        })?;
        if input.peek(Token![=]) {
            let eq: Token![=] = input.parse()?;
            return Err(syn::Error::new(
                eq.span,
                format!("a field and its value are joined by `:`: write `{word}: …`"),
            ));
        }
        input.parse::<Token![:]>()?;
        let value = match word.to_string().as_str() {
            "name" | "description" => Value::Text(input.parse().map_err(|e| {
                syn::Error::new(
                    e.span(),
                    format!("the {word} is a string literal: write `{word}: \"…\"`"),
                )
            })?),
            "uses" => {
                if !input.peek(syn::token::Bracket) {
                    return Err(input
                        .error("`uses` lists expose keys in brackets: write `uses: [load, \"proc.kill\"]`"));
                }
                let inner;
                bracketed!(inner in input);
                let mut keys = Vec::new();
                while !inner.is_empty() {
                    keys.push(expose_key(
                        &inner,
                        "expected an expose key: a member's name (`load`) or a quoted procedure name (`\"proc.kill\"`)",
                    )?);
                    if inner.is_empty() {
                        break;
                    }
                    inner.parse::<Token![,]>()?;
                }
                Value::Keys(keys)
            }
            _ => Value::Expr(Box::new(input.parse()?)),
        };
        Ok(Field { word, value })
    }
}

/// Why `name` breaks the Agent Skills naming rules, if it does.
fn name_problem(name: &str) -> Option<String> {
    let fix = {
        let mut fixed = String::new();
        for c in name.chars() {
            let c = c.to_ascii_lowercase();
            let c = if c.is_ascii_alphanumeric() { c } else { '-' };
            if !(c == '-' && (fixed.is_empty() || fixed.ends_with('-'))) {
                fixed.push(c);
            }
        }
        fixed.trim_end_matches('-').to_owned()
    };
    let rule = "a skill's name is 1 to 64 lowercase letters, digits and single hyphens, not starting or ending with a hyphen (the Agent Skills rule; it is the last segment of the skill's URI)";
    let valid = !name.is_empty()
        && name.len() <= NAME_MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if valid {
        None
    } else if fix.is_empty() || fix.len() > NAME_MAX {
        Some(rule.to_owned())
    } else {
        Some(format!("{rule}: write \"{fix}\""))
    }
}

pub fn expand(input: SkillInput) -> TokenStream {
    let mut errors = Errors::new();
    let map = &input.map;
    let map_name = map
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    let (mut name, mut description, mut instructions, mut uses) = (None, None, None, None);
    for field in &input.fields {
        let word = field.word.to_string();
        let slot_taken = match (word.as_str(), &field.value) {
            ("name", Value::Text(lit)) => name.replace(lit).is_some(),
            ("description", Value::Text(lit)) => description.replace(lit).is_some(),
            ("uses", Value::Keys(keys)) => uses.replace(keys).is_some(),
            ("instructions", Value::Expr(e)) => instructions.replace(e).is_some(),
            _ => {
                errors.at(&field.word, unknown_word(&word, "`skill!`", FIELDS));
                continue;
            }
        };
        if slot_taken {
            errors.at(&field.word, format!("`{word}` is given twice: keep one"));
        }
    }
    let at_map = |what: &str, example: &str| {
        syn::Error::new_spanned(map, format!("the skill has no `{what}`: add `{what}: {example}`"))
    };
    if name.is_none() {
        errors.push(at_map("name", "\"triage\""));
    }
    if description.is_none() {
        errors.push(at_map(
            "description",
            "\"What the skill is for and when to use it.\"",
        ));
    }
    if instructions.is_none() {
        errors.push(at_map("instructions", "include_str!(\"skills/triage.md\")"));
    }
    if let Some(lit) = name
        && let Some(why) = name_problem(&lit.value())
    {
        errors.at(lit, why);
    }
    if let Some(lit) = description {
        let text = lit.value();
        if text.trim().is_empty() {
            errors.at(
                lit,
                "a skill's description says what it does and when to use it: write it (hosts show it before loading the skill)",
            );
        } else if text.chars().count() > DESCRIPTION_MAX {
            errors.at(
                lit,
                format!(
                    "a skill's description is at most {DESCRIPTION_MAX} characters (the Agent Skills rule), this one is {}: shorten it and move the rest into the instructions",
                    text.chars().count()
                ),
            );
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut checks = Vec::new();
    let mut keys = Vec::new();
    for key in uses.into_iter().flatten() {
        if seen.contains(&key.key.as_str()) {
            errors.push(syn::Error::new(
                key.span,
                format!("`{}` is used twice: keep one", key.key),
            ));
            continue;
        }
        seen.push(&key.key);
        let (k, quoted) = (&key.key, key.quoted);
        checks.push(quote_spanned! {key.span=>
            const _: () = if let ::core::option::Option::Some(why) =
                ::surface::__private::keys::exposed_problem(#map_name, ENTRIES, #k, #quoted)
            {
                ::core::panic!("{}", why.as_str())
            };
        });
        keys.push(k.clone());
    }
    let compile_errors = errors.to_compile_errors();
    let name = name.map_or_else(|| quote!(""), ToTokens::to_token_stream);
    let description = description.map_or_else(|| quote!(""), ToTokens::to_token_stream);
    // The instructions' own expression, spanned at it: a value that is not a `&'static str`
    // is a type error there.
    let instructions = match instructions {
        Some(e) => quote_spanned!(syn::spanned::Spanned::span(e)=> #e),
        None => quote!(""),
    };
    let span = syn::spanned::Spanned::span(map);
    let entries = quote_spanned!(span=> #map.entries());
    // Through the map, so the skill is over the map's surface: declared over another, it is a
    // mismatch of the two `Skill` types at the map.
    let skill = quote_spanned!(span=> #map.__skill(#name, #description, INSTRUCTIONS, &[#(#keys),*]));
    quote! {
        {
            #compile_errors
            const ENTRIES: &[::surface::ExposeEntry] = #entries;
            const INSTRUCTIONS: &str = #instructions;
            #(#checks)*
            #skill
        }
    }
}

#[cfg(test)]
mod tests {
    use super::name_problem;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for ok in ["triage", "a", "load-2", "pdf-processing"] {
            assert_eq!(name_problem(ok), None, "{ok}");
        }
        for (bad, fix) in [
            ("Triage", "triage"),
            ("load_check", "load-check"),
            ("-a", "a"),
            ("a--b", "a-b"),
        ] {
            let why = name_problem(bad).unwrap();
            assert!(why.ends_with(&format!("write \"{fix}\"")), "{bad}: {why}");
        }
        assert!(name_problem("").is_some());
        assert!(name_problem(&"a".repeat(65)).is_some());
    }
}

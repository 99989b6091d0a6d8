//! Skills: instructions for a workflow over a surface's exposed tools and resources, served to
//! agents through the MCP skills extension (`io.modelcontextprotocol/skills`, SEP-2640).
//!
//! A skill is declared next to prompts with `skill!`, against one expose map: its name (the
//! Agent Skills rules: lowercase letters, digits and single hyphens, at most 64 characters),
//! its description, its instructions (markdown, e.g. `include_str!("skills/triage.md")`) and
//! the expose keys it uses, each checked at compile time against that map (a key it does not
//! expose is an error at the key, with the closest exposed key). A bundle member serves it
//! (`Member::new(EXPOSE).skill(TRIAGE)`) as the resource `skill://<name>/SKILL.md` (a sibling's
//! under its key, `skill://<key>/<name>/SKILL.md`): YAML frontmatter (`name`, `description`),
//! the instructions, and a generated list of the tools and resources it uses by their served
//! names. `skills/list` and `skills/get` answer its entry with the SHA-256 digest and size of
//! that file; a caller whose scopes do not reach every tool and resource it uses is not shown
//! it.
//!
//! ```
//! use surface_runtime::{Expose, skill::Skill};
//! struct Ops;
//! const EXPOSE: Expose<Ops> = Expose::none();
//! const TRIAGE: Skill<Ops> = EXPOSE.__skill(
//!     "triage",
//!     "Investigate a loaded machine.",
//!     "Read the load first.",
//!     &["load"],
//! );
//! assert_eq!(TRIAGE.name(), "triage");
//! let file = TRIAGE.skill_md(&["resource `surface://cells/load`".to_owned()]);
//! assert!(file.starts_with("---\nname: \"triage\"\ndescription: \"Investigate a loaded machine.\"\n---\n"));
//! ```

use std::fmt;
use std::marker::PhantomData;

/// A skill over surface `S`, built by `skill!` (which checks every key it uses against the
/// expose map it names).
pub struct Skill<S> {
    name: &'static str,
    description: &'static str,
    instructions: &'static str,
    uses: &'static [&'static str],
    surface: PhantomData<fn() -> S>,
}

impl<S> Skill<S> {
    /// Used by `skill!` (through the map it names, [`crate::Expose::__skill`]) after it has
    /// checked the name and every key; not for hand-written skills.
    pub(crate) const fn checked(
        name: &'static str,
        description: &'static str,
        instructions: &'static str,
        uses: &'static [&'static str],
    ) -> Self {
        Skill {
            name,
            description,
            instructions,
            uses,
            surface: PhantomData,
        }
    }

    /// Its name: the last segment of its URI and its frontmatter's `name`.
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// Its description: its frontmatter's `description`, what a host shows before loading it.
    pub const fn description(&self) -> &'static str {
        self.description
    }

    /// Its instructions, as written.
    pub const fn instructions(&self) -> &'static str {
        self.instructions
    }

    /// The expose keys it uses, in the order written.
    pub const fn uses(&self) -> &'static [&'static str] {
        self.uses
    }

    /// The same skill with its surface type erased, for a member that holds it.
    pub(crate) fn erase(&self) -> ErasedSkill {
        ErasedSkill {
            name: self.name,
            description: self.description,
            instructions: self.instructions,
            uses: self.uses,
        }
    }

    /// The text of its `SKILL.md`: the frontmatter, the instructions, then `served` (one line
    /// per tool or resource it uses, as served) under "Tools and resources".
    pub fn skill_md(&self, served: &[String]) -> String {
        self.erase().skill_md(served)
    }
}

impl<S> Clone for Skill<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Skill<S> {}

impl<S> fmt::Debug for Skill<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Skill")
            .field("name", &self.name)
            .field("description", &self.description)
            .field("uses", &self.uses)
            .finish_non_exhaustive()
    }
}

/// A skill whose surface type has been erased (what a member stores).
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face serves skills
pub(crate) struct ErasedSkill {
    pub name: &'static str,
    pub description: &'static str,
    pub instructions: &'static str,
    pub uses: &'static [&'static str],
}

impl ErasedSkill {
    pub(crate) fn skill_md(&self, served: &[String]) -> String {
        // Both values as JSON strings, which YAML reads as the same strings: a description
        // with `:` or `#` (or a name YAML would read as a number) stays a string.
        let quoted = |s: &str| serde_json::Value::from(s).to_string();
        let mut text = format!(
            "---\nname: {}\ndescription: {}\n---\n\n{}\n",
            quoted(self.name),
            quoted(self.description),
            self.instructions.trim_end()
        );
        if !served.is_empty() {
            text.push_str("\n## Tools and resources\n\n");
            for line in served {
                text.push_str("- ");
                text.push_str(line);
                text.push('\n');
            }
        }
        text
    }
}

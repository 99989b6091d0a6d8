//! The clap command tree of a built command: one subcommand per tool, the reader commands,
//! the global flags.

use super::{BuiltCli, flags};
use crate::spec::MemberKind;
use clap::builder::PossibleValuesParser;
use clap::{Arg, ArgAction, Command};
use std::path::PathBuf;

pub(super) fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_owned()
}

impl BuiltCli {
    /// The whole command tree, as clap sees it (e.g. to render help or completions).
    pub fn command(&self) -> Command {
        let member_arg = |kinds: &[MemberKind], help: &'static str| {
            Arg::new("member")
                .required(true)
                .value_name("MEMBER")
                .help(help)
                .value_parser(PossibleValuesParser::new(self.member_names(kinds)))
        };
        let mut cmd = Command::new(self.name.clone())
            .version(self.version.clone())
            .subcommand_required(true)
            .arg_required_else_help(true)
            .arg(
                Arg::new("timeout")
                    .long("timeout")
                    .global(true)
                    .help_heading("Connection")
                    .value_name("SECONDS")
                    .value_parser(clap::value_parser!(u64))
                    .help("How long dialling and each request may take (default: 30)"),
            );
        if let Some(about) = &self.about {
            cmd = cmd.about(about.clone());
        }
        if !self.declared.is_empty() {
            cmd = cmd.arg(
                Arg::new("scope")
                    .long("scope")
                    .global(true)
                    .action(ArgAction::Append)
                    .value_delimiter(',')
                    .help_heading("Connection")
                    .value_name("SCOPE")
                    .value_parser(PossibleValuesParser::new(self.declared.iter().map(|s| s.wire)))
                    .help("Reach only what these scopes reach (repeatable, or SCOPE,SCOPE)"),
            );
        }
        if self.socket.is_some() {
            cmd = cmd.arg(
                Arg::new("socket")
                    .long("socket")
                    .global(true)
                    .help_heading("Connection")
                    .value_name("PATH")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(if self.local.is_some() {
                        "Dial the daemon serving the surface on this unix socket (default: run in-process)"
                    } else {
                        "Dial the daemon serving the surface on this unix socket (required)"
                    }),
            );
        }
        for tool in &self.tools {
            let description = tool.row.description;
            let mut sub = Command::new(tool.row.name.clone())
                .about(first_line(description))
                .long_about((!description.is_empty()).then_some(description));
            // The tool's own flags first, then how else to give its input.
            for field in &tool.fields {
                for arg in flags::args(field) {
                    sub = sub.arg(arg);
                }
            }
            sub = sub
                .arg(
                    Arg::new("input")
                        .long("input")
                        .value_name("JSON|-")
                        .conflicts_with_all(flags::ids(&tool.fields))
                        .help("The whole input as one JSON object; `-` reads it from stdin"),
                )
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print the whole answer (content, structuredContent, isError)"),
                );
            cmd = cmd.subcommand(sub);
        }
        use MemberKind::*;
        cmd.subcommand(
            Command::new("list")
                .about("List the tools and members this command reaches (read from the table: dials nothing)")
                .arg(
                    Arg::new("json")
                        .long("json")
                        .action(ArgAction::SetTrue)
                        .help("Print every tool with its input schema and every member with its URI"),
                ),
        )
        .subcommand(
            Command::new("get")
                .about("Print a cell's value, a stream's chunks (NDJSON), or one item of a collection")
                .arg(member_arg(
                    &[Cell, Stream, Collection],
                    "A cell, stream or collection",
                ))
                .arg(
                    Arg::new("key")
                        .value_name("KEY")
                        .help("The item's key (collections only)"),
                )
                .arg(
                    Arg::new("follow")
                        .long("follow")
                        .short('f')
                        .action(ArgAction::SetTrue)
                        .help("Keep printing: each new value of a cell, each new chunk of a stream (NDJSON)"),
                ),
        )
        .subcommand(
            Command::new("keys")
                .about("Print the keys of a collection")
                .arg(member_arg(&[Collection], "A collection")),
        )
        .subcommand(
            Command::new("watch")
                .about("Print every change of a member from now on, one JSON line each")
                .arg(member_arg(&[Cell, Collection, Stream, Event], "Any member")),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script")
                .arg(
                    Arg::new("shell")
                        .required(true)
                        .value_parser(PossibleValuesParser::new(["bash", "zsh", "fish"])),
                ),
        )
    }
}

//! The guide, one chapter per module, in the order you meet things: declare a surface, serve
//! it, test it as an agent would, fit it to hosts, reach it through the other faces, project
//! it, scale it out, and know its bounds and limits. Every chapter's examples run as doc
//! tests.

#[doc = include_str!("../docs/declare.md")]
pub mod declare {}

#[doc = include_str!("../docs/serve.md")]
pub mod serve {}

#[doc = include_str!("../docs/testing.md")]
pub mod testing {}

#[doc = include_str!("../docs/skills.md")]
pub mod skills {}

#[doc = include_str!("../docs/hosts.md")]
pub mod hosts {}

#[doc = include_str!("../docs/cli.md")]
pub mod cli {}

#[doc = include_str!("../docs/apps.md")]
pub mod apps {}

#[doc = include_str!("../docs/projection.md")]
pub mod projection {}

#[doc = include_str!("../docs/scale_out.md")]
pub mod scale_out {}

#[doc = include_str!("../docs/observe.md")]
pub mod observe {}

#[doc = include_str!("../docs/security.md")]
pub mod security {}

#[doc = include_str!("../docs/limits.md")]
pub mod limits {}

//! Bespoke tools and prompts, erased: on one surface (handed its dispatch) or at the bundle
//! root (handed the whole bundle).

use super::client::BundleClient;
use crate::blocks::ToolOutput;
use crate::dispatch::Dispatch;
use crate::failure::Failure;
use crate::prompt::{BespokePrompt, PromptAnswer, PromptDescriptor};
use crate::surface::SurfaceClient;
use crate::tool::{BespokeTool, CancellationToken, ToolDescriptor};
use futures::future::BoxFuture;
use serde_json::Value;
use std::sync::Arc;

/// A bespoke tool declared on one surface, erased: it is handed that surface's dispatch.
pub(crate) trait SurfaceTool: Send + Sync {
    fn descriptor(&self) -> &'static ToolDescriptor;
    fn invoke(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>>;
}

pub(super) struct ToolOnSurface<T>(pub(super) Arc<T>);

impl<T> SurfaceTool for ToolOnSurface<T>
where
    T: BespokeTool,
    T::Client: SurfaceClient,
{
    fn descriptor(&self) -> &'static ToolDescriptor {
        self.0.descriptor()
    }
    fn invoke(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>> {
        let tool = self.0.clone();
        Box::pin(async move {
            let client = T::Client::from_dispatch(dispatch);
            tool.invoke(args, &client, cancel).await
        })
    }
}

/// A bundle-root tool, erased: it is handed the whole bundle.
pub(crate) trait RootTool: Send + Sync {
    fn descriptor(&self) -> &'static ToolDescriptor;
    fn invoke(
        &self,
        args: Value,
        bundle: BundleClient,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>>;
}

pub(super) struct ToolAtRoot<T>(pub(super) Arc<T>);

impl<T: BespokeTool<Client = BundleClient>> RootTool for ToolAtRoot<T> {
    fn descriptor(&self) -> &'static ToolDescriptor {
        self.0.descriptor()
    }
    fn invoke(
        &self,
        args: Value,
        bundle: BundleClient,
        cancel: CancellationToken,
    ) -> BoxFuture<'static, Result<ToolOutput, Failure>> {
        let tool = self.0.clone();
        Box::pin(async move { tool.invoke(args, &bundle, cancel).await })
    }
}

/// A bespoke prompt declared on one surface, erased: it is handed that surface's dispatch.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
pub(crate) trait SurfacePrompt: Send + Sync {
    fn descriptor(&self) -> &'static PromptDescriptor;
    fn get(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
    ) -> BoxFuture<'static, Result<PromptAnswer, Failure>>;
}

#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
pub(super) struct PromptOnSurface<T>(pub(super) Arc<T>);

impl<T> SurfacePrompt for PromptOnSurface<T>
where
    T: BespokePrompt,
    T::Client: SurfaceClient,
{
    fn descriptor(&self) -> &'static PromptDescriptor {
        self.0.descriptor()
    }

    fn get(
        &self,
        args: Value,
        dispatch: Arc<dyn Dispatch>,
    ) -> BoxFuture<'static, Result<PromptAnswer, Failure>> {
        let prompt = self.0.clone();
        Box::pin(async move {
            let client = T::Client::from_dispatch(dispatch);
            prompt.get(args, &client).await
        })
    }
}

/// A bespoke prompt at the bundle root, erased: it is handed the whole [`BundleClient`].
///
/// [`BundleClient`]: BundleClient
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
pub(crate) trait RootPrompt: Send + Sync {
    fn descriptor(&self) -> &'static PromptDescriptor;
    fn get(&self, args: Value, bundle: BundleClient) -> BoxFuture<'static, Result<PromptAnswer, Failure>>;
}

#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // only the MCP face gets prompts
pub(super) struct PromptAtRoot<T>(pub(super) Arc<T>);

impl<T: BespokePrompt<Client = BundleClient>> RootPrompt for PromptAtRoot<T> {
    fn descriptor(&self) -> &'static PromptDescriptor {
        self.0.descriptor()
    }

    fn get(&self, args: Value, bundle: BundleClient) -> BoxFuture<'static, Result<PromptAnswer, Failure>> {
        let prompt = self.0.clone();
        Box::pin(async move { prompt.get(args, &bundle).await })
    }
}

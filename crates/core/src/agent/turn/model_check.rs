//! Asking the server's model list about the model, beside the first request rather than
//! before it: a name the list does not hold gets one warning with the closest names, and a
//! gateway's listed price is learnt for pricing the calls.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_llm::ModelListing;
use tokio::task::JoinHandle;

use crate::agent::{Agent, Events};

/// How long after it was asked the answer is waited for (it has usually come before the
/// first response: it was asked at the same time). Counted from the question, so a server
/// whose list never answers costs a run at most this, and nothing once a model took longer.
const LISTING_WAIT: Duration = Duration::from_secs(2);

/// Where the question stands.
#[derive(Debug, Default)]
pub(crate) enum ModelCheck {
    /// Not asked yet.
    #[default]
    NotAsked,
    /// Asked at that instant; the answer is on its way.
    Pending(JoinHandle<Option<ModelListing>>, Instant),
    /// Answered, or given up on.
    Done,
}

impl Agent {
    /// Asks the model list in the background, once per agent (sub-agents do not: their
    /// parent asked).
    pub(in crate::agent) fn start_model_check(&mut self) {
        if !matches!(self.model_check, ModelCheck::NotAsked) || self.is_subagent() {
            return;
        }
        let provider = Arc::clone(&self.provider);
        let model = self.settings.model.clone();
        let asking = tokio::spawn(async move { provider.model_listing(&model).await });
        self.model_check = ModelCheck::Pending(asking, Instant::now());
    }

    /// Takes the answer, waiting a little for it: warns of a model the list does not name,
    /// and learns the price it lists.
    pub(in crate::agent) async fn finish_model_check(&mut self, events: &Events) {
        let ModelCheck::Pending(handle, asked) =
            std::mem::replace(&mut self.model_check, ModelCheck::Done)
        else {
            return;
        };
        let left = LISTING_WAIT.saturating_sub(asked.elapsed());
        // No list, a task that failed, or a server too slow to say: nothing to tell.
        let Ok(Ok(Some(listing))) = tokio::time::timeout(left, handle).await else {
            return;
        };
        if let Some(price) = listing.price {
            self.spend.prices().learn(&self.settings.model, price);
        }
        if let Some(message) = listing.warning(&self.settings.model) {
            events.warn(message);
        }
    }

    /// Asks the server's model list about the model now (the REPL's `/model`), warning as a
    /// turn would.
    pub async fn check_model(&mut self, events: &Events) {
        self.start_model_check();
        self.finish_model_check(events).await;
    }
}

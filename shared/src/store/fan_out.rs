//! The one bounded fan-out: tasks started from a source, at most so many
//! in flight, each output handed back as its task finishes. A task that
//! panicked (or was cancelled) is a failure of the operation it ran, one
//! way for every caller. Work that borrows from its caller (and so cannot
//! be spawned) runs through [`in_order`], bounded the same way.

use std::future::Future;

use futures_util::StreamExt;
use tokio::task::JoinSet;

use super::errors::StoreError;

/// Tasks of one operation in flight, at most `limit` at once.
pub struct FanOut<T> {
    in_flight: JoinSet<T>,
    limit: usize,
    op: &'static str,
}

impl<T: Send + 'static> FanOut<T> {
    /// At most `limit` tasks of `op` (named in a failure) at once.
    pub fn new(limit: usize, op: &'static str) -> Self {
        Self {
            in_flight: JoinSet::new(),
            limit: limit.max(1),
            op,
        }
    }

    /// Starts tasks from `next_task` until `limit` are in flight or it has
    /// none to give, then the output of the next task to finish; `None`
    /// once none is in flight and none was started. Dropping the fan-out
    /// aborts what is still in flight.
    pub async fn next<F>(
        &mut self,
        mut next_task: impl FnMut() -> Option<F>,
    ) -> Option<Result<T, StoreError>>
    where
        F: Future<Output = T> + Send + 'static,
    {
        while self.in_flight.len() < self.limit {
            let Some(task) = next_task() else { break };
            self.in_flight.spawn(task);
        }
        let joined = self.in_flight.join_next().await?;
        Some(joined.map_err(|lost| StoreError::Sdk {
            op: self.op,
            unavailable: false,
            throttled: false,
            source: Box::new(lost),
        }))
    }
}

/// `tasks` (futures not yet polled) run at most `limit` at once on the
/// caller's own task, so a task may borrow what the caller holds; their
/// outputs in the tasks' order. A new task starts as soon as one ends, not
/// when a whole batch has. (The tasks come made, not from a closure: a
/// future holding a closure over borrowed items is not `Send` for every
/// lifetime, and the admitter's runs are spawned.)
pub async fn in_order<F: Future>(limit: usize, tasks: Vec<F>) -> Vec<F::Output> {
    // Unordered, then put back in order: `buffered` counts an output kept
    // for its turn against the limit, so one slow task would hold up the
    // rest.
    let numbered = tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| async move { (i, task.await) });
    let mut outputs: Vec<(usize, F::Output)> = futures_util::stream::iter(numbered)
        .buffer_unordered(limit.max(1))
        .collect()
        .await;
    outputs.sort_unstable_by_key(|(i, _)| *i);
    outputs.into_iter().map(|(_, output)| output).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn it_keeps_at_most_its_limit_in_flight_and_hands_back_every_output(
    ) -> Result<(), StoreError> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        let (running, most) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let mut inputs = 0..20u32;
        let mut fan = FanOut::new(3, "Test");
        let mut outputs = Vec::new();
        let task = |i: u32| {
            let (running, most) = (running.clone(), most.clone());
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::task::yield_now().await;
                running.fetch_sub(1, Ordering::SeqCst);
                i * 2
            }
        };
        while let Some(done) = fan.next(|| inputs.next().map(task)).await {
            outputs.push(done?);
        }
        outputs.sort_unstable();
        assert_eq!(outputs, (0..20).map(|i| i * 2).collect::<Vec<_>>());
        assert!(most.load(Ordering::SeqCst) <= 3);
        // A task that panics is a failure of the operation, not a panic.
        let mut fan = FanOut::new(2, "Test");
        let mut once = Some(async { panic!("lost") });
        let failed: Option<Result<(), StoreError>> = fan.next(|| once.take()).await;
        assert!(matches!(
            failed,
            Some(Err(StoreError::Sdk { op: "Test", .. }))
        ));
        Ok(())
    }

    #[tokio::test]
    async fn in_order_runs_borrowing_tasks_its_limit_at_once_and_keeps_their_order() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (running, most, started) = (
            AtomicUsize::new(0),
            AtomicUsize::new(0),
            AtomicUsize::new(0),
        );
        let started_while_first_ran = AtomicUsize::new(0);
        // The first task takes many turns, the rest one each.
        let task = |i: usize| {
            let (running, most, started) = (&running, &most, &started);
            let started_while_first_ran = &started_while_first_ran;
            async move {
                started.fetch_add(1, Ordering::SeqCst);
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                for _ in 0..if i == 0 { 100 } else { 1 } {
                    tokio::task::yield_now().await;
                }
                if i == 0 {
                    started_while_first_ran.store(started.load(Ordering::SeqCst), Ordering::SeqCst);
                }
                running.fetch_sub(1, Ordering::SeqCst);
                i * 2
            }
        };
        let outputs = in_order(3, (0..20).map(task).collect()).await;
        assert_eq!(outputs, (0..20).map(|i| i * 2).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), 3, "three at once, never more");
        // A slow first task holds up nothing: the others ran past it.
        assert_eq!(started_while_first_ran.load(Ordering::SeqCst), 20);
    }
}

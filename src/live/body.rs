//! The response-body cap shared by every body being read at once.

/// A response whose body stops with an error past the input cap, counted over every body
/// being read at once (see [`Budgeted`]).
pub(super) fn capped_body<B>(r: http::Response<B>) -> http::Response<Budgeted<B>> {
    let cap = usize::try_from(crate::input::max_input_bytes()).unwrap_or(usize::MAX);
    r.map(|inner| Budgeted { inner, taken: 0, cap })
}

/// Bytes of the response bodies being read right now, process-wide: each [`Budgeted`] body adds
/// what arrives and gives it back when it is dropped.
static IN_FLIGHT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A response body read against the input cap shared by every body read at once: a server
/// streaming without end into the several LISTs a check makes at once stops at the cap in
/// all (a small multiple of it in memory), not at the cap each.
pub struct Budgeted<B> {
    inner: B,
    taken: usize,
    cap: usize,
}

/// The error of a body past the cap (worded as the client's own limit says it).
#[derive(Debug)]
struct LengthLimitExceeded;

impl std::fmt::Display for LengthLimitExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("length limit exceeded")
    }
}

impl std::error::Error for LengthLimitExceeded {}

impl<B> http_body::Body for Budgeted<B>
where
    B: http_body::Body + Unpin,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = B::Data;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        use bytes::Buf;
        use std::sync::atomic::Ordering;
        use std::task::Poll;
        let this = &mut *self;
        match std::pin::Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let n = frame.data_ref().map_or(0, Buf::remaining);
                this.taken += n;
                if IN_FLIGHT.fetch_add(n, Ordering::SeqCst) + n > this.cap {
                    return Poll::Ready(Some(Err(Box::new(LengthLimitExceeded))));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl<B> Drop for Budgeted<B> {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(self.taken, std::sync::atomic::Ordering::SeqCst);
    }
}

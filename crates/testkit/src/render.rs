//! Turns a reply and the request it answers into a [`Plan`]: the exact bytes to send, and when.

use std::time::Duration;

use serde_json::Value;

use crate::{
    ApiErrorKind, CapturedRequest, Interruption, MalformedLine, Reply, WireFormat, anthropic,
    http::{check_header, has_header},
    openai, responses,
};

/// How deep dynamic replies may return further dynamic replies before it is called a loop.
const MAX_DYNAMIC_DEPTH: usize = 16;

/// What the renderers need to know about the request beyond the turn.
#[derive(Debug)]
pub(crate) struct RenderContext {
    pub(crate) request_index: usize,
    pub(crate) model: String,
    pub(crate) created_unix_secs: u64,
    pub(crate) include_usage: bool,
}

impl RenderContext {
    fn of(request: &CapturedRequest) -> Self {
        Self {
            request_index: request.index,
            model: request.model().unwrap_or("mock-model").to_owned(),
            created_unix_secs: request.received_unix_nanos / 1_000_000_000,
            include_usage: request.wants_usage_chunk(),
        }
    }
}

/// A response with a known length.
#[derive(Debug)]
pub(crate) struct BodyPlan {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    pub(crate) delay: Duration,
    pub(crate) truncation: Truncation,
}

/// Whether a body is sent whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Truncation {
    Whole,
    /// Close after this many bytes of body.
    CutAfter(usize),
    /// Stop after this many bytes of body and keep the connection open.
    StallAfter(usize),
}

/// A streamed (chunked SSE) response.
#[derive(Debug)]
pub(crate) struct StreamPlan {
    pub(crate) headers: Vec<(String, String)>,
    /// Complete SSE frames; the last one is the terminator.
    pub(crate) events: Vec<String>,
    pub(crate) chunk_delay: Duration,
    pub(crate) response_delay: Duration,
    pub(crate) malformed: Vec<MalformedLine>,
    pub(crate) ending: StreamEnding,
}

/// How a stream ends.
#[derive(Debug)]
pub(crate) enum StreamEnding {
    /// All events, then the end of the chunked body.
    Complete,
    /// Close the connection after this many events (never past the terminator).
    CutAfter(usize),
    /// Stop after this many events, connection open.
    StallAfter(usize),
    /// After this many events (never past the terminator), send `event` and end the body.
    ErrorAfter { events: usize, event: String },
}

/// The bytes to send for one request.
#[derive(Debug)]
pub(crate) enum Plan {
    Body(BodyPlan),
    Stream(StreamPlan),
    /// Nothing, ever: hold the connection until the client closes it.
    Silent,
}

fn json_plan(status: u16, body: &Value, headers: Vec<(String, String)>, delay: Duration) -> Plan {
    let mut headers = headers;
    if !has_header(&headers, "content-type") {
        headers.insert(
            0,
            ("content-type".to_owned(), "application/json".to_owned()),
        );
    }
    Plan::Body(BodyPlan {
        status,
        headers,
        body: body.to_string().into_bytes(),
        delay,
        truncation: Truncation::Whole,
    })
}

/// An error answer in the request's wire format.
pub(crate) fn error_plan(
    request: &CapturedRequest,
    status: u16,
    error_type: &str,
    message: &str,
) -> Plan {
    let body = match request.wire_format() {
        WireFormat::OpenAi | WireFormat::Responses => openai::error_json(error_type, message, None),
        WireFormat::Anthropic => anthropic::error_json(error_type, message),
    };
    json_plan(status, &body, Vec::new(), Duration::ZERO)
}

/// The answer when the script has no reply left.
pub(crate) fn exhausted_plan(request: &CapturedRequest) -> Plan {
    error_plan(
        request,
        500,
        "mock_script_exhausted",
        &format!(
            "script exhausted: the mock server has no reply for request #{} ({} {})",
            request.index, request.method, request.path
        ),
    )
}

fn script_error_plan(request: &CapturedRequest, problem: &str) -> Plan {
    error_plan(
        request,
        500,
        "mock_script_error",
        &format!("mock script error: {problem}"),
    )
}

fn check_headers(headers: &[(String, String)]) -> Result<(), String> {
    headers
        .iter()
        .try_for_each(|(name, value)| check_header(name, value))
}

/// The plan for `reply` answering `request`.
pub(crate) fn plan(reply: Reply, request: &CapturedRequest) -> Plan {
    let mut reply = reply;
    for _ in 0..MAX_DYNAMIC_DEPTH {
        reply = match reply {
            Reply::Dynamic(decide) => decide.decide(request),
            Reply::Turn(_) | Reply::Http(_) | Reply::Error(_) | Reply::Silent => break,
        };
    }
    match reply {
        Reply::Turn(turn) => {
            if let Err(problem) = check_headers(turn.extra_headers()) {
                return script_error_plan(request, &problem);
            }
            turn_plan(&turn, request)
        }
        Reply::Http(http) => {
            if let Err(problem) = check_headers(&http.headers) {
                return script_error_plan(request, &problem);
            }
            if !(200..=999).contains(&http.status) {
                return script_error_plan(
                    request,
                    &format!("status {} is not between 200 and 999", http.status),
                );
            }
            let mut headers = http.headers;
            if !has_header(&headers, "content-type") {
                headers.insert(
                    0,
                    ("content-type".to_owned(), "application/json".to_owned()),
                );
            }
            Plan::Body(BodyPlan {
                status: http.status,
                headers,
                body: http.body.into_bytes(),
                delay: http.delay,
                truncation: Truncation::Whole,
            })
        }
        Reply::Error(error) => {
            if let Err(problem) = check_headers(&error.headers) {
                return script_error_plan(request, &problem);
            }
            let body = match request.wire_format() {
                WireFormat::OpenAi | WireFormat::Responses => openai::api_error_body(error.kind),
                WireFormat::Anthropic => anthropic::api_error_body(error.kind),
            };
            let mut headers = error.headers;
            match error.kind {
                ApiErrorKind::RateLimited {
                    retry_after_secs: Some(secs),
                } if !has_header(&headers, "retry-after") => {
                    headers.push(("retry-after".to_owned(), secs.to_string()));
                }
                ApiErrorKind::RateLimited { .. }
                | ApiErrorKind::Overloaded
                | ApiErrorKind::ServerError
                | ApiErrorKind::ContextTooLong
                | ApiErrorKind::Unauthorized => {}
            }
            json_plan(error.kind.status(), &body, headers, error.delay)
        }
        Reply::Silent => Plan::Silent,
        Reply::Dynamic(_) => script_error_plan(
            request,
            &format!("dynamic replies nested more than {MAX_DYNAMIC_DEPTH} deep"),
        ),
    }
}

fn turn_plan(turn: &crate::Turn, request: &CapturedRequest) -> Plan {
    let context = RenderContext::of(request);
    let format = request.wire_format();
    let headers = turn.extra_headers().to_vec();
    if !request.wants_stream() || turn.forces_json() {
        let body = match format {
            WireFormat::OpenAi => openai::json_body(turn, &context),
            WireFormat::Anthropic => anthropic::json_body(turn, &context),
            WireFormat::Responses => responses::json_body(turn, &context),
        };
        let mut plan = json_plan(200, &body, headers, turn.delay_before_response());
        if let Plan::Body(body_plan) = &mut plan {
            match turn.interruption() {
                None => {}
                Some(Interruption::CutAfter(bytes)) => {
                    body_plan.truncation = Truncation::CutAfter(*bytes);
                }
                Some(Interruption::StallAfter(bytes)) => {
                    body_plan.truncation = Truncation::StallAfter(*bytes);
                }
                Some(Interruption::ErrorAfter { error, .. }) => {
                    body_plan.status = error.http_status();
                    body_plan.body = match format {
                        WireFormat::OpenAi | WireFormat::Responses => {
                            openai::error_json(&error.error_type, &error.message, None)
                        }
                        WireFormat::Anthropic => {
                            anthropic::error_json(&error.error_type, &error.message)
                        }
                    }
                    .to_string()
                    .into_bytes();
                }
            }
        }
        return plan;
    }

    let events = match format {
        WireFormat::OpenAi => openai::stream_events(turn, &context),
        WireFormat::Anthropic => anthropic::stream_events(turn, &context),
        WireFormat::Responses => responses::stream_events(turn, &context),
    };
    let ending = match turn.interruption() {
        None => StreamEnding::Complete,
        Some(Interruption::CutAfter(events)) => StreamEnding::CutAfter(*events),
        Some(Interruption::StallAfter(events)) => StreamEnding::StallAfter(*events),
        Some(Interruption::ErrorAfter { events, error }) => StreamEnding::ErrorAfter {
            events: *events,
            event: match format {
                WireFormat::OpenAi => openai::error_event(error),
                WireFormat::Anthropic => anthropic::error_event(error),
                WireFormat::Responses => responses::error_event(error),
            },
        },
    };
    let mut all_headers = Vec::new();
    if !has_header(&headers, "content-type") {
        all_headers.push(("content-type".to_owned(), "text/event-stream".to_owned()));
    }
    all_headers.push(("cache-control".to_owned(), "no-cache".to_owned()));
    all_headers.push(("transfer-encoding".to_owned(), "chunked".to_owned()));
    all_headers.extend(headers);
    Plan::Stream(StreamPlan {
        headers: all_headers,
        events,
        chunk_delay: turn.delay_between_chunks(),
        response_delay: turn.delay_before_response(),
        malformed: turn.malformed_lines().to_vec(),
        ending,
    })
}

//! Frame handling of a [`ClientConnection`]: each frame read from the peer (headers and their
//! continuation, data, settings, ping, GOAWAY, window updates, resets) and the checks of a
//! received header list.
use super::*;

impl ClientConnection {
    pub(super) fn on_frame(&mut self, d: Decoded) -> Result<(), H2Error> {
        let raw = d.raw_len;
        let frame = d.frame;
        // The server's preface is a SETTINGS frame.
        if !self.life.settled() && !matches!(frame, Frame::Settings { ack: false, .. }) {
            return Err(Self::protocol("the server's first frame is not SETTINGS"));
        }
        // A header block in progress admits only its CONTINUATION frames.
        if let Some(a) = &self.assembly {
            match &frame {
                Frame::Continuation { stream_id, .. } if *stream_id == a.stream_id => {}
                _ => {
                    return Err(Self::protocol(
                        "a frame interleaved in a header block (CONTINUATION expected)",
                    ))
                }
            }
        }
        let sid = frame.stream_id();
        let active = if sid == 0 { None } else { self.find(sid) };
        // Charge the frame to its stream, or to the socket ledger.
        match active {
            Some(i) => {
                if !self.charge_stream(i, raw)? {
                    // The stream failed on its allowance: its frames are now the socket's to
                    // ignore, but a header block must still be decoded.
                    return self.ignored_frame(frame, raw);
                }
            }
            None => {
                self.charge_socket(raw)?;
                if matches!(frame, Frame::WindowUpdate { .. }) {
                    self.window_updates_owed = self.window_updates_owed.saturating_add(raw as u64);
                }
            }
        }
        match frame {
            Frame::Settings { ack, settings } => self.on_settings(ack, &settings),
            Frame::Ping { ack, data } => {
                if !ack {
                    self.queue_control(Frame::Ping { ack: true, data })?;
                }
                Ok(())
            }
            Frame::GoAway {
                last_stream_id,
                reason,
                ..
            } => self.on_goaway(last_stream_id, reason),
            Frame::WindowUpdate {
                stream_id,
                increment,
            } => self.on_window_update(stream_id, increment, active),
            Frame::Priority { .. } => {
                Self::count(&mut self.priority_frames, H2Limit::PriorityFrames)
            }
            Frame::Unknown { .. } => Self::count(&mut self.unknown_frames, H2Limit::UnknownFrames),
            Frame::PushPromise { .. } => Err(Self::protocol("PUSH_PROMISE while push is disabled")),
            Frame::RstStream { stream_id, reason } => {
                if !self.is_ours(stream_id) {
                    return Err(Self::protocol("RST_STREAM on an idle stream"));
                }
                if let Some(i) = active {
                    let s = self.streams.remove(i);
                    self.events.push_back(StreamEvent::Failed {
                        stream: StreamId(s.id),
                        error: H2Error::Reset { reason },
                        raw: s.raw,
                    });
                }
                Ok(())
            }
            Frame::Data {
                stream_id,
                end_stream,
                data,
                ..
            } => {
                if !self.is_ours(stream_id) {
                    return Err(Self::protocol("DATA on an idle stream"));
                }
                let flow = raw - super::super::frame::HEADER_LEN;
                self.conn_recv_window -= flow as i64;
                if self.conn_recv_window < 0 {
                    return Err(H2Error::Protocol {
                        reason: Reason::FLOW_CONTROL_ERROR,
                        what: "DATA beyond the connection window",
                    });
                }
                if flow == 0 && !end_stream {
                    Self::count(&mut self.empty_data, H2Limit::EmptyDataFrames)?;
                }
                match active {
                    Some(i) => self.on_data(i, end_stream, data, flow),
                    None => {
                        if self.was_reset(stream_id) {
                            self.release(None);
                            Ok(())
                        } else {
                            Err(H2Error::Protocol {
                                reason: Reason::STREAM_CLOSED,
                                what: "DATA on a closed stream",
                            })
                        }
                    }
                }
            }
            Frame::Headers {
                stream_id,
                end_stream,
                end_headers,
                fragment,
                ..
            } => {
                if !self.is_ours(stream_id) {
                    return Err(Self::protocol(
                        "HEADERS on an idle or server-initiated stream",
                    ));
                }
                let target = if active.is_some() {
                    Target::Stream
                } else if self.was_reset(stream_id) {
                    Target::Ignored
                } else {
                    return Err(H2Error::Protocol {
                        reason: Reason::STREAM_CLOSED,
                        what: "HEADERS on a closed stream",
                    });
                };
                self.assembly = Some(Assembly {
                    stream_id,
                    continuations: 0,
                    raw: 0,
                    end_stream,
                    target,
                });
                self.block_fragment(&fragment, end_headers)
            }
            Frame::Continuation {
                end_headers,
                fragment,
                ..
            } => {
                if self.assembly.is_none() {
                    return Err(Self::protocol("CONTINUATION without a header block"));
                }
                self.count_continuation()?;
                self.block_fragment(&fragment, end_headers)
            }
        }
    }

    /// Counts one more CONTINUATION of the block being assembled.
    pub(super) fn count_continuation(&mut self) -> Result<(), H2Error> {
        if let Some(a) = &mut self.assembly {
            a.continuations += 1;
            if a.continuations > self.config.max_continuations {
                return Err(H2Error::Limit {
                    limit: H2Limit::ContinuationFrames,
                    max: u64::from(self.config.max_continuations),
                });
            }
        }
        Ok(())
    }

    /// A frame of a stream that just failed on its allowance: a header block still goes through
    /// HPACK, everything else is dropped.
    pub(super) fn ignored_frame(&mut self, frame: Frame, raw: usize) -> Result<(), H2Error> {
        match frame {
            Frame::Headers {
                stream_id,
                end_headers,
                fragment,
                end_stream,
                ..
            } => {
                self.assembly = Some(Assembly {
                    stream_id,
                    continuations: 0,
                    raw: 0,
                    end_stream,
                    target: Target::Ignored,
                });
                self.block_fragment(&fragment, end_headers)
            }
            Frame::Continuation {
                end_headers,
                fragment,
                ..
            } => {
                if let Some(a) = &mut self.assembly {
                    a.target = Target::Ignored;
                }
                self.count_continuation()?;
                self.block_fragment(&fragment, end_headers)
            }
            Frame::Data { .. } => {
                // Still flow-controlled on the connection (RFC 9113 §6.9), then discarded.
                self.conn_recv_window -= (raw - super::super::frame::HEADER_LEN) as i64;
                if self.conn_recv_window < 0 {
                    return Err(H2Error::Protocol {
                        reason: Reason::FLOW_CONTROL_ERROR,
                        what: "DATA beyond the connection window",
                    });
                }
                self.release(None);
                Ok(())
            }
            _ => Ok(()),
        }
    }

    pub(super) fn block_fragment(
        &mut self,
        fragment: &[u8],
        end_headers: bool,
    ) -> Result<(), H2Error> {
        let Some(a) = &mut self.assembly else {
            return Ok(());
        };
        a.raw += fragment.len();
        if a.raw > self.config.header_block_bytes {
            return Err(H2Error::Budget(self.config.exceeded(Budget::HeaderBlock)));
        }
        match self.decoder.feed(fragment) {
            Ok(()) => {}
            Err(e) if e.is_connection_error() => return Err(e.into()),
            Err(_) => {}
        }
        if !end_headers {
            return Ok(());
        }
        let Some(a) = self.assembly.take() else {
            return Ok(());
        };
        let list = match self.decoder.finish() {
            Ok(list) => Ok(list),
            Err(e) if e.is_connection_error() => return Err(e.into()),
            Err(e) => Err(e),
        };
        if a.target == Target::Ignored {
            return Ok(());
        }
        let Some(i) = self.find(a.stream_id) else {
            return Ok(());
        };
        match list {
            Ok(list) => self.on_header_list(i, list, a.end_stream),
            Err(e) => self.fail_stream(i, e.into(), Reason::CANCEL),
        }
    }

    pub(super) fn on_header_list(
        &mut self,
        i: usize,
        list: Vec<Header>,
        end_stream: bool,
    ) -> Result<(), H2Error> {
        let phase = self.streams[i].phase;
        let (status, fields) = match check_fields(list, phase == Phase::AwaitingHead) {
            Ok(v) => v,
            Err(e) => return self.fail_stream(i, e, Reason::PROTOCOL_ERROR),
        };
        let id = StreamId(self.streams[i].id);
        if phase == Phase::Body {
            // Trailers.
            if !end_stream {
                return self.fail_stream(
                    i,
                    H2Error::Malformed {
                        what: "trailers without END_STREAM",
                    },
                    Reason::PROTOCOL_ERROR,
                );
            }
            return self.end_stream(i, fields);
        }
        let Some(status) = status else {
            return self.fail_stream(
                i,
                H2Error::Malformed { what: "no :status" },
                Reason::PROTOCOL_ERROR,
            );
        };
        if (100..200).contains(&status) {
            if status == 101 {
                return self.fail_stream(
                    i,
                    H2Error::Malformed {
                        what: "101 Switching Protocols is not allowed in HTTP/2",
                    },
                    Reason::PROTOCOL_ERROR,
                );
            }
            if end_stream {
                return self.fail_stream(
                    i,
                    H2Error::Malformed {
                        what: "a 1xx response with END_STREAM",
                    },
                    Reason::PROTOCOL_ERROR,
                );
            }
            let limit = self.config.informational_responses;
            let s = &mut self.streams[i];
            s.informational += 1;
            if s.informational > limit {
                return self.fail_stream(
                    i,
                    H2Error::Budget(self.config.exceeded(Budget::InformationalResponses)),
                    Reason::CANCEL,
                );
            }
            let raw = core::mem::take(&mut s.raw);
            self.events.push_back(StreamEvent::Informational {
                stream: id,
                status,
                raw,
            });
            return Ok(());
        }
        let mut content_length = None;
        for h in &fields {
            if h.name == b"content-length" {
                let v = parse_decimal(&h.value).ok_or(H2Error::Malformed {
                    what: "invalid content-length",
                });
                let v = match v {
                    Ok(v) if content_length.is_none_or(|c| c == v) => v,
                    Ok(_) => {
                        return self.fail_stream(
                            i,
                            H2Error::Malformed {
                                what: "conflicting content-length values",
                            },
                            Reason::PROTOCOL_ERROR,
                        )
                    }
                    Err(e) => return self.fail_stream(i, e, Reason::PROTOCOL_ERROR),
                };
                content_length = Some(v);
            }
        }
        let s = &mut self.streams[i];
        s.phase = Phase::Body;
        // RFC 9110 §6.4.1: a 204 or 304 has no content (nor does the answer to HEAD, which this
        // client never sends: `wire::Method` has no HEAD).
        s.no_body_expected = status == 304 || status == 204;
        s.content_length = content_length;
        let raw = core::mem::take(&mut s.raw);
        self.events.push_back(StreamEvent::Head {
            stream: id,
            status,
            headers: fields,
            raw,
        });
        if end_stream {
            return self.end_stream(i, Vec::new());
        }
        Ok(())
    }

    pub(super) fn end_stream(&mut self, i: usize, trailers: Vec<Header>) -> Result<(), H2Error> {
        let s = &self.streams[i];
        if let Some(cl) = s.content_length {
            if !s.no_body_expected && cl != s.received {
                let err = H2Error::ContentLength {
                    declared: cl,
                    received: s.received,
                };
                return self.fail_stream(i, err, Reason::PROTOCOL_ERROR);
            }
        }
        let s = self.streams.remove(i);
        // Useful work done: the socket's allowances get their share back.
        self.refill(s.data_frames_sent);
        if !s.local_closed {
            // The response is complete before our body: stop sending it (RFC 9113 §8.1).
            self.queue_control(Frame::RstStream {
                stream_id: s.id,
                reason: Reason::NO_ERROR,
            })?;
            self.remember_reset(s.id);
        }
        self.events.push_back(StreamEvent::End {
            stream: StreamId(s.id),
            trailers,
            raw: s.raw,
        });
        Ok(())
    }

    pub(super) fn on_data(
        &mut self,
        i: usize,
        end_stream: bool,
        data: Vec<u8>,
        flow: usize,
    ) -> Result<(), H2Error> {
        let s = &mut self.streams[i];
        s.recv_window -= flow as i64;
        if s.recv_window < 0 {
            self.release(None);
            return self.fail_stream(
                i,
                H2Error::Protocol {
                    reason: Reason::FLOW_CONTROL_ERROR,
                    what: "DATA beyond the stream window",
                },
                Reason::FLOW_CONTROL_ERROR,
            );
        }
        if s.phase != Phase::Body {
            self.release(None);
            return self.fail_stream(
                i,
                H2Error::Malformed {
                    what: "DATA before the response head",
                },
                Reason::PROTOCOL_ERROR,
            );
        }
        s.received += data.len() as u64;
        if let Some(cl) = s.content_length {
            if s.received > cl && !s.no_body_expected || (s.no_body_expected && !data.is_empty()) {
                let err = H2Error::ContentLength {
                    declared: cl,
                    received: s.received,
                };
                self.release(None);
                return self.fail_stream(i, err, Reason::PROTOCOL_ERROR);
            }
        }
        let id = StreamId(s.id);
        if !data.is_empty() {
            s.undelivered += data.len();
            self.conn_undelivered += data.len();
            let raw = core::mem::take(&mut s.raw);
            self.events.push_back(StreamEvent::Data {
                stream: id,
                data,
                raw,
            });
        }
        // Padding is discarded at once: its share of the windows may come back now.
        self.release(Some(id.0));
        if end_stream {
            return self.end_stream(i, Vec::new());
        }
        Ok(())
    }

    pub(super) fn on_settings(
        &mut self,
        ack: bool,
        settings: &[(u16, u32)],
    ) -> Result<(), H2Error> {
        if ack {
            if self.settings_deadline.take().is_none() {
                return Err(Self::protocol(
                    "SETTINGS ACK without SETTINGS to acknowledge",
                ));
            }
            return Ok(());
        }
        for &(id, v) in settings {
            match id {
                setting::ENABLE_PUSH if v != 0 => {
                    return Err(Self::protocol("a server may not set ENABLE_PUSH"));
                }
                setting::MAX_CONCURRENT_STREAMS => self.peer_max_streams = v,
                setting::INITIAL_WINDOW_SIZE => {
                    if i64::from(v) > MAX_WINDOW {
                        return Err(H2Error::Protocol {
                            reason: Reason::FLOW_CONTROL_ERROR,
                            what: "INITIAL_WINDOW_SIZE above 2^31-1",
                        });
                    }
                    let delta = i64::from(v) - self.peer_initial_window;
                    self.peer_initial_window = i64::from(v);
                    for s in &mut self.streams {
                        s.send_window += delta;
                        if s.send_window > MAX_WINDOW {
                            return Err(H2Error::Protocol {
                                reason: Reason::FLOW_CONTROL_ERROR,
                                what: "INITIAL_WINDOW_SIZE overflows a stream window",
                            });
                        }
                    }
                }
                setting::MAX_FRAME_SIZE => {
                    if !(16_384..=16_777_215).contains(&v) {
                        return Err(Self::protocol("MAX_FRAME_SIZE out of range"));
                    }
                    self.peer_max_frame = v as usize;
                }
                // HEADER_TABLE_SIZE: our encoder never indexes. MAX_HEADER_LIST_SIZE: advisory.
                _ => {}
            }
        }
        if matches!(self.life, Life::Handshake) {
            self.life = Life::Open;
        }
        self.queue_control(Frame::Settings {
            ack: true,
            settings: Vec::new(),
        })?;
        self.flush_bodies();
        Ok(())
    }

    pub(super) fn on_goaway(&mut self, last: u32, reason: Reason) -> Result<(), H2Error> {
        if let Some((prev, _)) = self.life.goaway() {
            if last > prev {
                return Err(Self::protocol("GOAWAY raised its last stream id"));
            }
        }
        match &mut self.life {
            Life::Failed { goaway, .. } => *goaway = Some((last, reason)),
            life => {
                *life = Life::GoingAway {
                    last_stream_id: last,
                    reason,
                }
            }
        }
        let mut kept = Vec::new();
        for s in core::mem::take(&mut self.streams) {
            if s.id > last {
                self.remember_reset(s.id);
                self.events.push_back(StreamEvent::Failed {
                    stream: StreamId(s.id),
                    error: H2Error::GoAway {
                        reason,
                        last_stream_id: last,
                    },
                    raw: s.raw,
                });
            } else {
                kept.push(s);
            }
        }
        self.streams = kept;
        Ok(())
    }

    pub(super) fn on_window_update(
        &mut self,
        sid: u32,
        inc: u32,
        active: Option<usize>,
    ) -> Result<(), H2Error> {
        if sid == 0 {
            if inc == 0 {
                return Err(Self::protocol("WINDOW_UPDATE with a zero increment"));
            }
            self.conn_send_window += i64::from(inc);
            if self.conn_send_window > MAX_WINDOW {
                return Err(H2Error::Protocol {
                    reason: Reason::FLOW_CONTROL_ERROR,
                    what: "WINDOW_UPDATE overflows the connection window",
                });
            }
            self.flush_bodies();
            return Ok(());
        }
        if !self.is_ours(sid) {
            return Err(Self::protocol("WINDOW_UPDATE on an idle stream"));
        }
        let Some(i) = active else {
            return Ok(());
        };
        if inc == 0 {
            return self.fail_stream(
                i,
                Self::protocol("WINDOW_UPDATE with a zero increment"),
                Reason::PROTOCOL_ERROR,
            );
        }
        let s = &mut self.streams[i];
        s.send_window += i64::from(inc);
        if s.send_window > MAX_WINDOW {
            return self.fail_stream(
                i,
                H2Error::Protocol {
                    reason: Reason::FLOW_CONTROL_ERROR,
                    what: "WINDOW_UPDATE overflows the stream window",
                },
                Reason::FLOW_CONTROL_ERROR,
            );
        }
        self.flush_bodies();
        Ok(())
    }
}

pub(super) fn event_stream(e: &StreamEvent) -> StreamId {
    match e {
        StreamEvent::Informational { stream, .. }
        | StreamEvent::Head { stream, .. }
        | StreamEvent::Data { stream, .. }
        | StreamEvent::End { stream, .. }
        | StreamEvent::Failed { stream, .. } => *stream,
    }
}

/// Lowercase token characters (RFC 9110 tchar without uppercase).
pub(super) fn is_token_lower(b: u8) -> bool {
    matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+'
        | b'-' | b'.' | b'^' | b'_' | b'`' | b'|' | b'~')
}

/// Connection-specific fields (RFC 9113 §8.2.2); `te` is allowed only as `trailers`.
pub(super) fn is_connection_specific(name: &[u8], value: &[u8]) -> bool {
    matches!(
        name,
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade"
    ) || (name == b"te" && value != b"trailers")
}

pub(super) fn parse_decimal(v: &[u8]) -> Option<u64> {
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    v.iter().try_fold(0u64, |acc, &d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })
}

/// Checks a response header list (RFC 9113 §8.1.1, §8.3.2): `:status` only, first, once (and
/// only in a head); names lowercase tokens; no connection-specific field; values without CR, LF
/// or NUL. Returns the status and the regular fields.
pub(super) fn check_fields(
    list: Vec<Header>,
    head: bool,
) -> Result<(Option<u16>, Vec<Header>), H2Error> {
    let mut status = None;
    let mut regular_seen = false;
    let mut fields = Vec::with_capacity(list.len());
    for h in list {
        if h.value.iter().any(|&b| matches!(b, b'\r' | b'\n' | 0))
            || h.value.first().is_some_and(|&b| b == b' ' || b == b'\t')
            || h.value.last().is_some_and(|&b| b == b' ' || b == b'\t')
        {
            return Err(H2Error::Malformed {
                what: "a field value with CR, LF, NUL or surrounding whitespace",
            });
        }
        if h.name.first() == Some(&b':') {
            if h.name != b":status" || !head {
                return Err(H2Error::Malformed {
                    what: "a pseudo-header other than :status in a response head",
                });
            }
            if regular_seen {
                return Err(H2Error::Malformed {
                    what: "a pseudo-header after a regular field",
                });
            }
            if status.is_some() {
                return Err(H2Error::Malformed {
                    what: "a second :status",
                });
            }
            let v = &h.value;
            if v.len() != 3 || !v.iter().all(u8::is_ascii_digit) {
                return Err(H2Error::Malformed {
                    what: "an invalid :status",
                });
            }
            let n = v.iter().fold(0u16, |a, &d| a * 10 + u16::from(d - b'0'));
            if n < 100 {
                return Err(H2Error::Malformed {
                    what: "an invalid :status",
                });
            }
            status = Some(n);
            continue;
        }
        regular_seen = true;
        if h.name.is_empty() || !h.name.iter().all(|&b| is_token_lower(b)) {
            return Err(H2Error::Malformed {
                what: "a field name that is empty, uppercase or not a token",
            });
        }
        if is_connection_specific(&h.name, &h.value) {
            return Err(H2Error::Malformed {
                what: "a connection-specific field",
            });
        }
        fields.push(h);
    }
    Ok((status, fields))
}

"""OTLP/HTTP trace request bodies → `SpanData` (protobuf with opentelemetry-proto, and JSON).

The JSON encoding is OTLP's (opentelemetry-proto's JSON mapping with hex trace and span ids,
lowerCamelCase keys; 64-bit integers as text or numbers); base64 ids, as a generic protobuf JSON
printer writes them, are accepted too. Only span attributes are kept (not the resource's).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ._spans import SpanData

_STATUS_ERROR = 2  # STATUS_CODE_ERROR in both encodings


class BadRequest(ValueError):
    """The body is not an OTLP trace export request."""


def _any_value(value: Any) -> Any:
    """An OTLP AnyValue (protobuf message) as plain data."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which is None:
        return None
    if which == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.kvlist_value.values}
    if which == "bytes_value":
        return value.bytes_value.hex()
    return getattr(value, which)


class RawSpan:
    """A decoded protobuf span whose attributes are not read yet: reading them costs most of the
    decoding, so the receiver only takes the ids it routes and checks by, and the turn reads the
    rest once, when it finishes (`data()`)."""

    __slots__ = ("_span", "parent_span_id", "span_id", "trace_id")

    def __init__(self, span: Any) -> None:
        self._span = span
        self.trace_id: str = span.trace_id.hex()
        self.span_id: str = span.span_id.hex()
        self.parent_span_id: str | None = span.parent_span_id.hex() or None

    def data(self) -> SpanData:
        span = self._span
        return SpanData(
            name=span.name, trace_id=self.trace_id, span_id=self.span_id, parent_span_id=self.parent_span_id,
            start_ns=span.start_time_unix_nano, end_ns=span.end_time_unix_nano or span.start_time_unix_nano,
            error=span.status.code == _STATUS_ERROR, status_message=span.status.message or None,
            attributes={kv.key: _any_value(kv.value) for kv in span.attributes},
        )


def decode_protobuf(body: bytes) -> list[RawSpan]:
    try:
        request = ExportTraceServiceRequest.FromString(body)
    except Exception as exc:  # google.protobuf.message.DecodeError
        raise BadRequest(f"not an OTLP protobuf trace request: {exc}") from None
    return [RawSpan(span) for resource_spans in request.resource_spans
            for scope_spans in resource_spans.scope_spans for span in scope_spans.spans]


def span_data(span: RawSpan | SpanData) -> SpanData:
    """A received span in the one form the conversion reads."""
    return span.data() if isinstance(span, RawSpan) else span


def _hex_id(value: Any, size: int) -> str:
    """An id written as hex (OTLP JSON) or base64 (generic protobuf JSON) → hex; '' when absent."""
    if not value:
        return ""
    if not isinstance(value, str):
        raise BadRequest(f"an id must be text, got {value!r}")
    if len(value) == 2 * size:
        try:
            bytes.fromhex(value)
            return value.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != size:
        raise BadRequest(f"{value!r} is not a {size}-byte id in hex")
    return raw.hex()


def _json_value(value: Any) -> Any:
    """An OTLP JSON AnyValue ({"stringValue": ...} etc.) as plain data."""
    if not isinstance(value, dict) or not value:
        return None
    key, inner = next(iter(value.items()))
    if key == "intValue":
        return int(inner)
    if key == "doubleValue":
        return float(inner)
    if key == "arrayValue":
        return [_json_value(v) for v in (inner or {}).get("values", [])]
    if key == "kvlistValue":
        return {kv.get("key"): _json_value(kv.get("value")) for kv in (inner or {}).get("values", [])}
    if key == "bytesValue":
        return base64.b64decode(inner).hex()
    return inner


def _nanos(value: Any) -> int:
    """A time in nanoseconds: OTLP's is a fixed64, so one outside it is refused here rather than
    failing (as an overflow blamed on the adapter) when the turn reads its spans."""
    nanos = int(value) if value not in (None, "") else 0
    if not 0 <= nanos < 2**64:
        raise BadRequest(f"a span time of {str(value)[:40]!r} ns is not a 64-bit unsigned number")
    return nanos


def decode_json(body: bytes) -> list[SpanData]:
    try:
        request = json.loads(body)
        spans = []
        for resource_spans in request.get("resourceSpans") or []:
            for scope_spans in resource_spans.get("scopeSpans") or []:
                for span in scope_spans.get("spans") or []:
                    status = span.get("status") or {}
                    start = _nanos(span.get("startTimeUnixNano"))
                    spans.append(SpanData(
                        name=str(span.get("name", "")),
                        trace_id=_hex_id(span.get("traceId"), 16),
                        span_id=_hex_id(span.get("spanId"), 8),
                        parent_span_id=_hex_id(span.get("parentSpanId"), 8) or None,
                        start_ns=start,
                        end_ns=_nanos(span.get("endTimeUnixNano")) or start,
                        error=status.get("code") in (_STATUS_ERROR, "STATUS_CODE_ERROR"),
                        status_message=status.get("message") or None,
                        attributes={kv["key"]: _json_value(kv.get("value")) for kv in span.get("attributes") or []},
                    ))
        return spans
    except BadRequest:
        raise
    except (ValueError, TypeError, AttributeError, KeyError, RecursionError) as exc:  # nested past the parser, too
        raise BadRequest(f"not an OTLP JSON trace request: {type(exc).__name__}: {exc}") from None


__all__ = ["BadRequest", "RawSpan", "decode_json", "decode_protobuf", "span_data"]

"""The OpenAPI description of the ingestion API, served at /api/v1/openapi.json."""

from __future__ import annotations

from typing import Any

from core.knowledge.documents import FIRST_YEAR, LAST_YEAR, MAX_ID_CHARS, MAX_NUMBER_DIGITS

ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
            "required": ["code", "message"],
        }
    },
}
STATUS = {
    "type": "object",
    "properties": {
        "collection": {"type": "string"},
        "id": {"type": "string"},
        "state": {"type": "string", "enum": ["queued", "indexed", "failed", "absent"]},
        "error": {"type": "string"},
        "indexed": {
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "chunks": {"type": "integer"},
                "content_hash": {"type": "string"},
                "version": {"type": "string"},
                "updated_at": {"type": "number"},
            },
        },
    },
    "required": ["collection", "id", "state"],
}


def _response(description: str, schema: str = "Error") -> dict[str, Any]:
    ref = {"$ref": f"#/components/schemas/{schema}"}
    return {"description": description, "content": {"application/json": {"schema": ref}}}


ERRORS = {
    "401": _response("no or unknown token"),
    "403": _response("the collection belongs to another application"),
    "404": _response("unknown collection"),
    "400": _response("a collection name or document id too long or with control characters"),
}
# Names and ids: no control characters (C0, DEL, C1), and not too long.
NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_ID_CHARS,
    "pattern": "^[^\\x00-\\x1f\\x7f-\\x9f]+$",
}
DOCUMENT_PARAMETERS = [
    {"name": "collection", "in": "path", "required": True, "schema": NAME},
    {"name": "doc_id", "in": "path", "required": True, "schema": NAME},
]
WAIT = {
    "name": "wait",
    "in": "query",
    "required": False,
    "description": "true: answer once the job is done (up to 60 s) instead of at once",
    "schema": {"type": "boolean"},
}


def build_openapi(document_schema: dict[str, Any]) -> dict[str, Any]:
    document_path = {
        "parameters": DOCUMENT_PARAMETERS,
        "put": {
            "summary": "Create or replace a document",
            "description": "Re-sending an unchanged document does nothing (200). A changed "
            "document replaces all its chunks at once. PDF and Word (docx) files are sent "
            "in the same JSON body, base64-encoded in `content_base64` with `format` "
            '"pdf" or "docx"; the server reads their text (a PDF\'s with its pages, '
            "which citations name).",
            "parameters": [WAIT],
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {"schema": {"$ref": "#/components/schemas/Document"}}
                },
            },
            "responses": {
                "200": _response("unchanged, or indexed (with wait)", "Status"),
                "202": _response("queued for indexing", "Status"),
                **ERRORS,
                "400": _response(
                    f"invalid JSON (syntax, nesting, a number over {MAX_NUMBER_DIGITS} digits, "
                    "a lone surrogate), id or document (its fields; dates outside the years "
                    f"{FIRST_YEAR} to {LAST_YEAR}); `unreadable_document`: a PDF or Word "
                    "file whose text cannot be read (no text layer, a password, damaged, "
                    "too many pages), the message says which"
                ),
                "413": _response("the document (or the file) is over the size limit"),
            },
        },
        "delete": {
            "summary": "Delete a document and all its chunks",
            "parameters": [WAIT],
            "responses": {
                "200": _response("deleted (with wait)", "Status"),
                "202": _response("queued for deletion", "Status"),
                **ERRORS,
            },
        },
        "get": {
            "summary": "The status of one document",
            "responses": {"200": _response("the status", "Status"), **ERRORS},
        },
    }
    return {
        "openapi": "3.1.0",
        "info": {"title": "Knowledge bot ingestion API", "version": "1"},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Document": document_schema, "Status": STATUS, "Error": ERROR},
        },
        "security": [{"bearer": []}],
        "paths": {
            "/api/v1/openapi.json": {
                "get": {
                    "summary": "This document",
                    "security": [],
                    "responses": {"200": {"description": "the OpenAPI document"}},
                }
            },
            "/api/v1/jwks.json": {
                "get": {
                    "summary": "The bot's public keys (JWKS) to verify reader tokens with",
                    "security": [],
                    "responses": {"200": {"description": "a JWKS document"}},
                }
            },
            "/api/v1/collections": {
                "get": {
                    "summary": "The caller's collections with their sizes",
                    "responses": {"200": {"description": "collections"}, "401": ERRORS["401"]},
                }
            },
            "/api/v1/collections/{collection}/documents/{doc_id}": document_path,
        },
    }

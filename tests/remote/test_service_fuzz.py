"""Fuzz the runner service from its own OpenAPI spec (schemathesis): no 5xx, responses match the spec."""

from __future__ import annotations

import pytest

schemathesis = pytest.importorskip("schemathesis")
from hypothesis import HealthCheck, settings  # noqa: E402

from tritonlens.ascend_runner.remote_server import ServerConfig, create_app  # noqa: E402

TOKEN = "t0ken-for-tests-0123456789abcdef"  # same as conftest.TOKEN


class _Idle:
    def submit(self, job, *, cancel=None, timeout_s=None):
        return {"schema": 1, "id": job["id"], "ok": True, "kind": job["kind"], "result": {}}

    def health(self):
        return {}

    def close(self):
        pass


schema = schemathesis.openapi.from_dict(create_app(ServerConfig(token=TOKEN), _Idle()).openapi())


@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_to_its_spec(case, service):
    url, _ = service
    if "wait_s" in (case.query or {}):
        case.query["wait_s"] = 0  # long-polls only slow the fuzzing down
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {TOKEN}"}
    response = case.call(base_url=url, timeout=15)
    assert response.status_code < 500, response.text
    case.validate_response(
        response,
        excluded_checks=[
            schemathesis.checks.unsupported_method,
            schemathesis.checks.ignored_auth,
            schemathesis.checks.missing_required_header,  # the test always adds the token; auth has its own tests
            schemathesis.checks.allow_header_conformance,  # Starlette lists one route's methods on 405
            schemathesis.checks.positive_data_acceptance,
        ],
    )

"""Reads a JUnit report as CI systems do: validates it against tests/ci/junit.xsd (xmlschema)
and parses it with junitparser, then prints what was read as JSON for the Rust test to compare
(tests/ci.rs). Usage: python3 junit_read.py REPORT.xml"""
import json
import os
import sys

import junitparser
import xmlschema

report = sys.argv[1]
schema = xmlschema.XMLSchema(os.path.join(os.path.dirname(__file__), "junit.xsd"))
schema.validate(report)
xml = junitparser.JUnitXml.fromfile(report)
suites = []
for suite in xml:
    cases = []
    for case in suite:
        failures = [{"type": r.type, "message": r.message, "text": r.text} for r in case.result if isinstance(r, junitparser.Failure)]
        skipped = any(isinstance(r, junitparser.Skipped) for r in case.result)
        cases.append({"name": case.name, "classname": case.classname, "file": case._elem.get("file"), "line": case._elem.get("line"), "failures": failures, "skipped": skipped})
    suites.append({"name": suite.name, "tests": suite.tests, "failures": suite.failures, "errors": suite.errors, "skipped": suite.skipped, "cases": cases})
print(json.dumps(suites))

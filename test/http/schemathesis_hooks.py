# schemathesis hooks, loaded by test/http/schemathesis.test.ts (SCHEMATHESIS_HOOKS): how to make
# values of the `entity-tags` format that /openapi.json gives If-Match and If-None-Match (RFC 9110
# 13.1.1: "*" or a list of entity tags, 8.8.3). Without it, schemathesis's coverage phase makes
# header values of letters and digits only, finds no valid entity tag (it is always quoted), and
# puts an invalid one ("0") into the cases it sends as valid ones.

import schemathesis
from hypothesis import strategies as st

# etagc: visible ASCII but the double quote.
ETAGC = "".join(chr(code) for code in range(0x21, 0x7F) if chr(code) != '"')
opaque = st.one_of(st.integers(0, 9).map(str), st.text(alphabet=ETAGC, max_size=8))
tag = st.builds(lambda weak, text: ("W/" if weak else "") + '"' + text + '"', st.booleans(), opaque)

schemathesis.openapi.format("entity-tags", st.one_of(st.just("*"), st.lists(tag, min_size=1, max_size=3).map(", ".join)))

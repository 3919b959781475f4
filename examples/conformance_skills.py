"""How a host uses the skills extension (SEP-2640), as the conformance suite's client scenarios ask.

``examples/conformance_client.py`` runs :func:`skills_scenario` for the scenarios named
``sep-2640-client-*``. Each scenario's server lists one skill and watches what the client reads:

* ``sep-2640-client-no-prefetch``: the host lists skills to build its registry and reads nothing,
  "not on connection, not on listing, and not at approval";
* ``sep-2640-client-verify-digest``, ``-size``, ``-frontmatter``: the host loads the skill, the
  server serves a ``SKILL.md`` that does not match the entry, and the host must refuse it and so
  never go on to the skill's other files.
"""

from __future__ import annotations

import sys

from mcpkit import Client, SkillVerificationError


async def skills_scenario(client: Client, scenario: str) -> None:
    """Act as a host for *scenario*: list the skills, then (unless told not to fetch) load the first
    one and read its other files, each checked against the entry; a failed check stops the load."""
    skills = await client.list_skills()
    for skill in skills:
        print(f"skill {skill.name}: {skill.description} ({skill.uri})", file=sys.stderr)
    if scenario == "sep-2640-client-no-prefetch" or not skills:
        return  # the registry is built from the entries alone
    skill = skills[0]
    try:
        body = await client.load_skill(skill)
        print(f"loaded {skill.uri} ({len(body)} characters)", file=sys.stderr)
        for resource in skill.resources if isinstance(skill.resources, list) else []:
            if resource.uri != skill.uri:
                data = await client.read_skill_file(skill, resource.uri)
                print(f"read {resource.uri} ({len(data)} bytes)", file=sys.stderr)
    except SkillVerificationError as exc:
        print(f"refused to load {skill.uri}: {exc}", file=sys.stderr)

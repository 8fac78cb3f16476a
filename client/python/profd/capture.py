# SPDX-License-Identifier: Apache-2.0
# Copyright The profd authors
"""What a backend is asked to capture: the Python view of profd_capture_t."""

import collections
import json

from .settings import SettingsError

Schedule = collections.namedtuple("Schedule", "skip_first wait warmup active repeat")
Schedule.__doc__ = """torch.profiler schedule counted in sub-steps (decode steps,
micro-batches); a capture without one has schedule None."""


def _text(b):
    return None if b is None else b.decode("utf-8", "replace")


class Capture:
    """One capture of one window in this process.

    Built-in and user backends receive it in start(), step() and stop(). The
    same object is passed from a start() to the stop() that ends it; a
    backend may keep its own attributes on it. Fields:

      window_id, window   window id and name ("w3-step2")
      job, role           role "e2e" for end-to-end captures
      phase               the phase ("generate"), None end-to-end
      rank, replica_rank  replica_rank None when not an inference replica
      first_step, last_step  planned, inclusive; last_step None: until stopped
      step                the step at which this call happens
      substep             start: first sub-step recorded (0-based);
                          stop: one past the last one; step(): the sub-step
                          just completed
      part                recorded span number (0, 1, ... per capture)
      tool, mode          "torch", ...; "e2e" or "discrete"
      settings            the tool settings (dict); settings_json their text
      dir                 absolute folder to write every output file into
      schedule            Schedule, or None
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)
        self._settings = None

    @classmethod
    def from_c(cls, c):
        s = c.schedule
        sched = Schedule(s.skip_first, s.wait, s.warmup, s.active, s.repeat) if s.active > 0 else None
        return cls(
            window_id=c.window_id,
            window=_text(c.window),
            job=_text(c.job),
            role=_text(c.role),
            phase=_text(c.phase),
            rank=c.rank,
            replica_rank=None if c.replica_rank < 0 else c.replica_rank,
            first_step=c.first_step,
            last_step=None if c.last_step < 0 else c.last_step,
            step=c.step,
            substep=c.substep,
            part=c.part,
            tool=_text(c.tool) or "",
            mode=_text(c.mode) or "e2e",
            settings_json=_text(c.settings_json) or "{}",
            dir=_text(c.dir),
            schedule=sched,
        )

    def update_from_c(self, c):
        """A later call on the same capture: where it happens."""
        self.step = c.step
        self.substep = c.substep
        self.part = c.part

    @property
    def settings(self):
        """The tool settings as a dict (SettingsError when not a JSON object)."""
        if self._settings is None:
            try:
                v = json.loads(self.settings_json)
            except ValueError as e:
                raise SettingsError("settings are not valid JSON: %s" % e) from None
            if not isinstance(v, dict):
                raise SettingsError("settings must be a JSON object, found %s" % type(v).__name__)
            self._settings = v
        return self._settings

    @property
    def discrete(self):
        return self.phase is not None

    def __repr__(self):
        return "Capture(%s %s%s rank %d step %d part %d -> %s)" % (
            self.window,
            self.role,
            "." + self.phase if self.phase else "",
            self.rank,
            self.step,
            self.part,
            self.dir,
        )

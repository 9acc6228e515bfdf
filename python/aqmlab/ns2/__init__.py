"""ns-2.35, the simulator the RED-PD, CSFQ and BRED papers ran, beside aqmlab (issue 21).

- `export`: an aqmlab scenario as an ns-2 Tcl script (`aqmlab export ns2 FILE`), with an
  error naming the first part ns-2 cannot express;
- `run`: runs `ns` on such a script and reads its measurements back into per-flow and
  per-link rows;
- `crosscheck`: one scenario in both simulators, side by side (`aqmlab crosscheck FILE`);
- `validate`: the recorded ns-2 reference and the scenarios it was run on (`aqmlab validate ns2`).

docs/ns2.md says what each part of a scenario becomes in ns-2 and where the two differ.
"""

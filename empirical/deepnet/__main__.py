"""``python -m grpodyn.empirical.deepnet``: where the deep-network study's steps live.

The study's steps (measure, predict, run, compare, figures and the relaxation routes) are the
scripts of ``studies/deepnet`` in a checkout of the repository, not part of the installed
package; this entry point says so in one line and exits with code 2.
"""

import sys

sys.stderr.write("grpodyn.empirical.deepnet: the deep-network study's steps are the scripts of "
                 "studies/deepnet in the repository: run `python -m deepnet_study STEP` from "
                 "studies/deepnet; the installed instrument is grpodyn.empirical.deepnet."
                 "instrument\n")
sys.exit(2)

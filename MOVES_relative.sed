# MOVES_relative.sed: relative imports inside empirical/ (only files under empirical/!).
# Usage: sed -E -i -f MOVES_relative.sed empirical/FILES
s/^(\s*)from \.loaders import/\1from grpodyn.empirical.logs.loaders import/
s/^(\s*)from \. import loaders as /\1from grpodyn.empirical.logs import loaders as /
s/^(\s*)from \.logs_aliases import/\1from grpodyn.empirical.logs.aliases import/
s/^(\s*)from \. import logs_aliases as /\1from grpodyn.empirical.logs import aliases as /
s/^(\s*)from \.logs_common import/\1from grpodyn.empirical.logs.common import/
s/^(\s*)from \. import logs_common as /\1from grpodyn.empirical.logs import common as /
s/^(\s*)from \.logs_config import/\1from grpodyn.empirical.logs.config import/
s/^(\s*)from \. import logs_config as /\1from grpodyn.empirical.logs import config as /
s/^(\s*)from \.logs_infer import/\1from grpodyn.empirical.logs.infer import/
s/^(\s*)from \. import logs_infer as /\1from grpodyn.empirical.logs import infer as /
s/^(\s*)from \.logs_meta import/\1from grpodyn.empirical.logs.meta import/
s/^(\s*)from \. import logs_meta as /\1from grpodyn.empirical.logs import meta as /
s/^(\s*)from \.logs_pickle import/\1from grpodyn.empirical.logs.pickled import/
s/^(\s*)from \. import logs_pickle as /\1from grpodyn.empirical.logs import pickled as /
s/^(\s*)from \.logs_records import/\1from grpodyn.empirical.logs.records import/
s/^(\s*)from \. import logs_records as /\1from grpodyn.empirical.logs import records as /
s/^(\s*)from \.logs_tables import/\1from grpodyn.empirical.logs.tables import/
s/^(\s*)from \. import logs_tables as /\1from grpodyn.empirical.logs import tables as /
s/^(\s*)from \.logs_tensorboard import/\1from grpodyn.empirical.logs.tensorboard_events import/
s/^(\s*)from \. import logs_tensorboard as /\1from grpodyn.empirical.logs import tensorboard_events as /
s/^(\s*)from \.logs_text import/\1from grpodyn.empirical.logs.text import/
s/^(\s*)from \. import logs_text as /\1from grpodyn.empirical.logs import text as /
s/^(\s*)from \.run_analysis import/\1from grpodyn.empirical.logs.run_analysis import/
s/^(\s*)from \. import run_analysis as /\1from grpodyn.empirical.logs import run_analysis as /
s/^(\s*)from \.run_figure import/\1from grpodyn.empirical.logs.run_figure import/
s/^(\s*)from \. import run_figure as /\1from grpodyn.empirical.logs import run_figure as /
s/^(\s*)from \.sweep import/\1from grpodyn.empirical.logs.sweep import/
s/^(\s*)from \. import sweep as /\1from grpodyn.empirical.logs import sweep as /
s/^(\s*)from \.bandit import/\1from grpodyn.empirical.bandit.simulation import/
s/^(\s*)from \. import bandit as /\1from grpodyn.empirical.bandit import simulation as /
s/^(\s*)from \.bandit_lab import/\1from grpodyn.empirical.bandit.lab import/
s/^(\s*)from \. import bandit_lab as /\1from grpodyn.empirical.bandit import lab as /
s/^(\s*)from \.bandit_plots import/\1from grpodyn.empirical.bandit.plots import/
s/^(\s*)from \. import bandit_plots as /\1from grpodyn.empirical.bandit import plots as /
s/^(\s*)from \.tiny_lm import/\1from grpodyn.empirical.tinylm.training import/
s/^(\s*)from \. import tiny_lm as /\1from grpodyn.empirical.tinylm import training as /
s/^(\s*)from \.make_tiny_runs import/\1from grpodyn.empirical.tinylm.make_runs import/
s/^(\s*)from \. import make_tiny_runs as /\1from grpodyn.empirical.tinylm import make_runs as /
s/^(\s*)from \.make_tiny_grid import/\1from grpodyn.empirical.tinylm.make_grid import/
s/^(\s*)from \. import make_tiny_grid as /\1from grpodyn.empirical.tinylm import make_grid as /
s/^(\s*)from \.make_tiny_testbed import/\1from grpodyn.empirical.tinylm.make_testbed import/
s/^(\s*)from \. import make_tiny_testbed as /\1from grpodyn.empirical.tinylm import make_testbed as /
s/^(\s*)from \.tiny_analysis import/\1from grpodyn.empirical.tinylm.analysis import/
s/^(\s*)from \. import tiny_analysis as /\1from grpodyn.empirical.tinylm import analysis as /
s/^(\s*)from \.curvature_probe import/\1from grpodyn.empirical.tinylm.curvature_probe import/
s/^(\s*)from \. import curvature_probe as /\1from grpodyn.empirical.tinylm import curvature_probe as /
s/^(\s*)from \.diagnostics import/\1from grpodyn.empirical.diagnostics.diagnose import/
s/^(\s*)from \. import diagnostics as /\1from grpodyn.empirical.diagnostics import diagnose as /
s/^(\s*)from \.testbed import/\1from grpodyn.empirical.diagnostics.testbed import/
s/^(\s*)from \. import testbed as /\1from grpodyn.empirical.diagnostics import testbed as /
s/^(\s*)from \.prompt_pool_sim import/\1from grpodyn.empirical.diagnostics.prompt_pool_sim import/
s/^(\s*)from \. import prompt_pool_sim as /\1from grpodyn.empirical.diagnostics import prompt_pool_sim as /
s/^(\s*)from \.public_outcomes import/\1from grpodyn.empirical.diagnostics.public_outcomes import/
s/^(\s*)from \. import public_outcomes as /\1from grpodyn.empirical.diagnostics import public_outcomes as /
s/^(\s*)from \.source_matrix import/\1from grpodyn.empirical.diagnostics.source_matrix import/
s/^(\s*)from \. import source_matrix as /\1from grpodyn.empirical.diagnostics import source_matrix as /

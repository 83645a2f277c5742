# MOVES.sed: rewrite imports of the old flat empirical modules and the old ground-floor homes.
# Usage (GNU sed): sed -E -i -f MOVES.sed FILES, once, on files written against the OLD layout
# (other branches' files). Not idempotent: run on new-layout files it moves names twice.
# ground floor
s/from grpodyn\.numerics\.validation import/from grpodyn.ground import/g
s/from grpodyn\.numerics\.files import/from grpodyn.ground import/g
s/from grpodyn\.serialization import/from grpodyn.ground import/g
s/grpodyn\.numerics\.validation([^._[:alnum:]]|$)/grpodyn.ground.checks\1/g
s/grpodyn\.numerics\.files([^._[:alnum:]]|$)/grpodyn.ground.files\1/g
s/grpodyn\.serialization([^._[:alnum:]]|$)/grpodyn.ground.jsonio\1/g
# numerics files: relative imports of the two moved modules
s/^(\s*)from \.validation import/\1from grpodyn.ground import/
s/^(\s*)from \.files import/\1from grpodyn.ground import/
# empirical wings: "from grpodyn.empirical import old as x" and dotted names
s/grpodyn\.empirical\.loaders([^_[:alnum:]]|$)/grpodyn.empirical.logs.loaders\1/g
s/from grpodyn\.empirical import loaders as /from grpodyn.empirical.logs import loaders as /g
s/from grpodyn\.empirical import loaders$/from grpodyn.empirical.logs import loaders as loaders/g
s/grpodyn\.empirical\.logs_aliases([^_[:alnum:]]|$)/grpodyn.empirical.logs.aliases\1/g
s/from grpodyn\.empirical import logs_aliases as /from grpodyn.empirical.logs import aliases as /g
s/from grpodyn\.empirical import logs_aliases$/from grpodyn.empirical.logs import aliases as logs_aliases/g
s/grpodyn\.empirical\.logs_common([^_[:alnum:]]|$)/grpodyn.empirical.logs.common\1/g
s/from grpodyn\.empirical import logs_common as /from grpodyn.empirical.logs import common as /g
s/from grpodyn\.empirical import logs_common$/from grpodyn.empirical.logs import common as logs_common/g
s/grpodyn\.empirical\.logs_config([^_[:alnum:]]|$)/grpodyn.empirical.logs.config\1/g
s/from grpodyn\.empirical import logs_config as /from grpodyn.empirical.logs import config as /g
s/from grpodyn\.empirical import logs_config$/from grpodyn.empirical.logs import config as logs_config/g
s/grpodyn\.empirical\.logs_infer([^_[:alnum:]]|$)/grpodyn.empirical.logs.infer\1/g
s/from grpodyn\.empirical import logs_infer as /from grpodyn.empirical.logs import infer as /g
s/from grpodyn\.empirical import logs_infer$/from grpodyn.empirical.logs import infer as logs_infer/g
s/grpodyn\.empirical\.logs_meta([^_[:alnum:]]|$)/grpodyn.empirical.logs.meta\1/g
s/from grpodyn\.empirical import logs_meta as /from grpodyn.empirical.logs import meta as /g
s/from grpodyn\.empirical import logs_meta$/from grpodyn.empirical.logs import meta as logs_meta/g
s/grpodyn\.empirical\.logs_pickle([^_[:alnum:]]|$)/grpodyn.empirical.logs.pickled\1/g
s/from grpodyn\.empirical import logs_pickle as /from grpodyn.empirical.logs import pickled as /g
s/from grpodyn\.empirical import logs_pickle$/from grpodyn.empirical.logs import pickled as logs_pickle/g
s/grpodyn\.empirical\.logs_records([^_[:alnum:]]|$)/grpodyn.empirical.logs.records\1/g
s/from grpodyn\.empirical import logs_records as /from grpodyn.empirical.logs import records as /g
s/from grpodyn\.empirical import logs_records$/from grpodyn.empirical.logs import records as logs_records/g
s/grpodyn\.empirical\.logs_tables([^_[:alnum:]]|$)/grpodyn.empirical.logs.tables\1/g
s/from grpodyn\.empirical import logs_tables as /from grpodyn.empirical.logs import tables as /g
s/from grpodyn\.empirical import logs_tables$/from grpodyn.empirical.logs import tables as logs_tables/g
s/grpodyn\.empirical\.logs_tensorboard([^_[:alnum:]]|$)/grpodyn.empirical.logs.tensorboard_events\1/g
s/from grpodyn\.empirical import logs_tensorboard as /from grpodyn.empirical.logs import tensorboard_events as /g
s/from grpodyn\.empirical import logs_tensorboard$/from grpodyn.empirical.logs import tensorboard_events as logs_tensorboard/g
s/grpodyn\.empirical\.logs_text([^_[:alnum:]]|$)/grpodyn.empirical.logs.text\1/g
s/from grpodyn\.empirical import logs_text as /from grpodyn.empirical.logs import text as /g
s/from grpodyn\.empirical import logs_text$/from grpodyn.empirical.logs import text as logs_text/g
s/grpodyn\.empirical\.run_analysis([^_[:alnum:]]|$)/grpodyn.empirical.logs.run_analysis\1/g
s/from grpodyn\.empirical import run_analysis as /from grpodyn.empirical.logs import run_analysis as /g
s/from grpodyn\.empirical import run_analysis$/from grpodyn.empirical.logs import run_analysis as run_analysis/g
s/grpodyn\.empirical\.run_figure([^_[:alnum:]]|$)/grpodyn.empirical.logs.run_figure\1/g
s/from grpodyn\.empirical import run_figure as /from grpodyn.empirical.logs import run_figure as /g
s/from grpodyn\.empirical import run_figure$/from grpodyn.empirical.logs import run_figure as run_figure/g
s/grpodyn\.empirical\.sweep([^_[:alnum:]]|$)/grpodyn.empirical.logs.sweep\1/g
s/from grpodyn\.empirical import sweep as /from grpodyn.empirical.logs import sweep as /g
s/from grpodyn\.empirical import sweep$/from grpodyn.empirical.logs import sweep as sweep/g
s/grpodyn\.empirical\.bandit([^_[:alnum:]]|$)/grpodyn.empirical.bandit.simulation\1/g
s/from grpodyn\.empirical import bandit as /from grpodyn.empirical.bandit import simulation as /g
s/from grpodyn\.empirical import bandit$/from grpodyn.empirical.bandit import simulation as bandit/g
s/grpodyn\.empirical\.bandit_lab([^_[:alnum:]]|$)/grpodyn.empirical.bandit.lab\1/g
s/from grpodyn\.empirical import bandit_lab as /from grpodyn.empirical.bandit import lab as /g
s/from grpodyn\.empirical import bandit_lab$/from grpodyn.empirical.bandit import lab as bandit_lab/g
s/grpodyn\.empirical\.bandit_plots([^_[:alnum:]]|$)/grpodyn.empirical.bandit.plots\1/g
s/from grpodyn\.empirical import bandit_plots as /from grpodyn.empirical.bandit import plots as /g
s/from grpodyn\.empirical import bandit_plots$/from grpodyn.empirical.bandit import plots as bandit_plots/g
s/grpodyn\.empirical\.tiny_lm([^_[:alnum:]]|$)/grpodyn.empirical.tinylm.training\1/g
s/from grpodyn\.empirical import tiny_lm as /from grpodyn.empirical.tinylm import training as /g
s/from grpodyn\.empirical import tiny_lm$/from grpodyn.empirical.tinylm import training as tiny_lm/g
s/grpodyn\.empirical\.make_tiny_runs([^_[:alnum:]]|$)/grpodyn.empirical.tinylm.make_runs\1/g
s/from grpodyn\.empirical import make_tiny_runs as /from grpodyn.empirical.tinylm import make_runs as /g
s/from grpodyn\.empirical import make_tiny_runs$/from grpodyn.empirical.tinylm import make_runs as make_tiny_runs/g
s/grpodyn\.empirical\.make_tiny_grid([^_[:alnum:]]|$)/grpodyn.empirical.tinylm.make_grid\1/g
s/from grpodyn\.empirical import make_tiny_grid as /from grpodyn.empirical.tinylm import make_grid as /g
s/from grpodyn\.empirical import make_tiny_grid$/from grpodyn.empirical.tinylm import make_grid as make_tiny_grid/g
s/grpodyn\.empirical\.make_tiny_testbed([^_[:alnum:]]|$)/grpodyn.empirical.tinylm.make_testbed\1/g
s/from grpodyn\.empirical import make_tiny_testbed as /from grpodyn.empirical.tinylm import make_testbed as /g
s/from grpodyn\.empirical import make_tiny_testbed$/from grpodyn.empirical.tinylm import make_testbed as make_tiny_testbed/g
s/grpodyn\.empirical\.tiny_analysis([^_[:alnum:]]|$)/grpodyn.empirical.tinylm.analysis\1/g
s/from grpodyn\.empirical import tiny_analysis as /from grpodyn.empirical.tinylm import analysis as /g
s/from grpodyn\.empirical import tiny_analysis$/from grpodyn.empirical.tinylm import analysis as tiny_analysis/g
s/grpodyn\.empirical\.curvature_probe([^_[:alnum:]]|$)/grpodyn.empirical.tinylm.curvature_probe\1/g
s/from grpodyn\.empirical import curvature_probe as /from grpodyn.empirical.tinylm import curvature_probe as /g
s/from grpodyn\.empirical import curvature_probe$/from grpodyn.empirical.tinylm import curvature_probe as curvature_probe/g
s/grpodyn\.empirical\.diagnostics([^_[:alnum:]]|$)/grpodyn.empirical.diagnostics.diagnose\1/g
s/from grpodyn\.empirical import diagnostics as /from grpodyn.empirical.diagnostics import diagnose as /g
s/from grpodyn\.empirical import diagnostics$/from grpodyn.empirical.diagnostics import diagnose as diagnostics/g
s/grpodyn\.empirical\.testbed([^_[:alnum:]]|$)/grpodyn.empirical.diagnostics.testbed\1/g
s/from grpodyn\.empirical import testbed as /from grpodyn.empirical.diagnostics import testbed as /g
s/from grpodyn\.empirical import testbed$/from grpodyn.empirical.diagnostics import testbed as testbed/g
s/grpodyn\.empirical\.prompt_pool_sim([^_[:alnum:]]|$)/grpodyn.empirical.diagnostics.prompt_pool_sim\1/g
s/from grpodyn\.empirical import prompt_pool_sim as /from grpodyn.empirical.diagnostics import prompt_pool_sim as /g
s/from grpodyn\.empirical import prompt_pool_sim$/from grpodyn.empirical.diagnostics import prompt_pool_sim as prompt_pool_sim/g
s/grpodyn\.empirical\.public_outcomes([^_[:alnum:]]|$)/grpodyn.empirical.diagnostics.public_outcomes\1/g
s/from grpodyn\.empirical import public_outcomes as /from grpodyn.empirical.diagnostics import public_outcomes as /g
s/from grpodyn\.empirical import public_outcomes$/from grpodyn.empirical.diagnostics import public_outcomes as public_outcomes/g
s/grpodyn\.empirical\.source_matrix([^_[:alnum:]]|$)/grpodyn.empirical.diagnostics.source_matrix\1/g
s/from grpodyn\.empirical import source_matrix as /from grpodyn.empirical.diagnostics import source_matrix as /g
s/from grpodyn\.empirical import source_matrix$/from grpodyn.empirical.diagnostics import source_matrix as source_matrix/g
# file paths in docs and comments
s/empirical\/loaders\.py/empirical\/logs\/loaders.py/g
s/empirical\/logs_aliases\.py/empirical\/logs\/aliases.py/g
s/empirical\/logs_common\.py/empirical\/logs\/common.py/g
s/empirical\/logs_config\.py/empirical\/logs\/config.py/g
s/empirical\/logs_infer\.py/empirical\/logs\/infer.py/g
s/empirical\/logs_meta\.py/empirical\/logs\/meta.py/g
s/empirical\/logs_pickle\.py/empirical\/logs\/pickled.py/g
s/empirical\/logs_records\.py/empirical\/logs\/records.py/g
s/empirical\/logs_tables\.py/empirical\/logs\/tables.py/g
s/empirical\/logs_tensorboard\.py/empirical\/logs\/tensorboard_events.py/g
s/empirical\/logs_text\.py/empirical\/logs\/text.py/g
s/empirical\/run_analysis\.py/empirical\/logs\/run_analysis.py/g
s/empirical\/run_figure\.py/empirical\/logs\/run_figure.py/g
s/empirical\/sweep\.py/empirical\/logs\/sweep.py/g
s/empirical\/bandit\.py/empirical\/bandit\/simulation.py/g
s/empirical\/bandit_lab\.py/empirical\/bandit\/lab.py/g
s/empirical\/bandit_plots\.py/empirical\/bandit\/plots.py/g
s/empirical\/tiny_lm\.py/empirical\/tinylm\/training.py/g
s/empirical\/make_tiny_runs\.py/empirical\/tinylm\/make_runs.py/g
s/empirical\/make_tiny_grid\.py/empirical\/tinylm\/make_grid.py/g
s/empirical\/make_tiny_testbed\.py/empirical\/tinylm\/make_testbed.py/g
s/empirical\/tiny_analysis\.py/empirical\/tinylm\/analysis.py/g
s/empirical\/curvature_probe\.py/empirical\/tinylm\/curvature_probe.py/g
s/empirical\/diagnostics\.py/empirical\/diagnostics\/diagnose.py/g
s/empirical\/testbed\.py/empirical\/diagnostics\/testbed.py/g
s/empirical\/prompt_pool_sim\.py/empirical\/diagnostics\/prompt_pool_sim.py/g
s/empirical\/public_outcomes\.py/empirical\/diagnostics\/public_outcomes.py/g
s/empirical\/source_matrix\.py/empirical\/diagnostics\/source_matrix.py/g

# "import lab as lab" -> "import lab"
s/ import (\w+) as \1([,)]|$)/ import \1\2/g

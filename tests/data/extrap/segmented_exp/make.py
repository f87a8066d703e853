# Makes the .extra-p experiments of this folder with Extra-P itself, and what
# Extra-P says of their stored models. Run from Extra-P's tests/ directory:
#   cd <Extra-P 4.2.5>/tests && PYTHONPATH=<extrap package> python3 <this file> <this folder> [<text input>]
# Each NAME.extra-p is Extra-P's saved experiment of an Extra-P text input
# modeled with its segmented modeler (one parameter: SegmentedModeler; several:
# MultiParameterModeler with SegmentedModeler as its single-parameter modeler,
# as tests/test_serializing_segments.py does). NAME.models holds, per stored
# model, "callpath;metric;function" as Extra-P prints the function (a
# SegmentedFunction's newline printed as ", "); NAME.values Extra-P's value of
# each model at each measured coordinate, "callpath;metric;x1,x2,..;value"
# (repr of the floats).
import os
import sys

from extrap.fileio.experiment_io import write_experiment
from extrap.fileio.file_reader.text_file_reader import TextFileReader
from extrap.modelers.model_generator import ModelGenerator
from extrap.modelers.multi_parameter.multi_parameter_modeler import MultiParameterModeler
from extrap.modelers.single_parameter.segmented import SegmentedModeler

out = sys.argv[1]
inputs = sys.argv[2:] or ["data/text/one_parameter_segmented_5.txt",
                          "data/text/two_parameter_segmented_1.txt"]
for path in inputs:
    name = os.path.basename(path)[:-len(".txt")]
    e = TextFileReader().read_experiment(path)
    if len(e.parameters) == 1:
        modeler = SegmentedModeler()
    else:
        modeler = MultiParameterModeler()
        modeler.single_parameter_modeler = SegmentedModeler()
    ModelGenerator(e, modeler).model_all()
    write_experiment(e, os.path.join(out, name + ".extra-p"))
    names = [str(p) for p in e.parameters]
    with open(os.path.join(out, name + ".models"), "w") as models, \
            open(os.path.join(out, name + ".values"), "w") as values:
        for (callpath, metric), m in e.modelers[0].models.items():
            f = m.hypothesis.function
            models.write(f"{callpath};{metric};{f.to_string(*names).replace(chr(10), ', ')}\n")
            for c in e.coordinates:
                v = f.evaluate(c.as_tuple() if len(names) > 1 else c[0])
                values.write(f"{callpath};{metric};{','.join(repr(x) for x in c.as_tuple())};{float(v)!r}\n")

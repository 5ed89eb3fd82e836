package Cache::Memcached::RustXS::Dict::CLI;

use strict;
use warnings;

use File::Spec ();
use Getopt::Long 2.36 ();
use Pod::Usage ();

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Dict qw(fail sum_length load_dictionary_file);
use Cache::Memcached::RustXS::Dict::NodeReader ();
use Cache::Memcached::RustXS::Dict::Pool ();
use Cache::Memcached::RustXS::Dict::Files qw(read_sample_files);
use Cache::Memcached::RustXS::Dict::Sample qw(list_keys fetch_values);
use Cache::Memcached::RustXS::Dict::Measure qw(measure_held_out train);
use Cache::Memcached::RustXS::Dict::Report qw(print_json skipped_note shown ids_note);
use Cache::Memcached::RustXS::Dict::Report::Values qw(report_data train_data print_report print_train);
use Cache::Memcached::RustXS::Dict::Report::Dictionaries qw(print_train_all print_report_set set_data);
use Cache::Memcached::RustXS::Dict::Report::Set qw(print_prune prune_data print_list list_data print_rollback
                                                  rollback_data print_history history_data);
use Cache::Memcached::RustXS::Dict::SlabModel ();
use Cache::Memcached::RustXS::Dict::SettingsAdvisor qw(node_facts report_items set_written_items set_items advise
                                                       pack_items unpack_items print_advice advice_data);
use Cache::Memcached::RustXS::Dict::Tune ();
use Cache::Memcached::RustXS::Dict::Progress ();
use Cache::Memcached::RustXS::Dict::Workers ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Dict::SetTrainer qw(train_all report_set);
use Cache::Memcached::RustXS::Dict::Prune qw(prune_set parse_duration);
use Cache::Memcached::RustXS::Dict::Rollout qw(list_set rollback_set history_set);
use Cache::Memcached::RustXS::Zstd::DictionarySet::State ();
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(atomic_write);

our $VERSION = '1.000';

my $MIN_DICT = 256;    # the smallest dictionary zstd makes
my %DEFAULT = (delimiter => ':', sample => 1000, size => 16384, timeout => 10);
# The options of the tuning, which every subcommand but prune takes
# (--if-better only with a set).
my @SET_OPTIONS = qw(if-better=s max-size=s levels=s methods=s compress-time=s decompress-time=s);
# How a node's size is met, which every subcommand that samples takes:
# processes at once, prefixes tracked, progress wherever standard error goes.
my @SCALE_OPTIONS = qw(jobs=s max-prefixes=s progress);
my %EXIT = (ok => 0, failure => 1, usage => 2, unusable => 2);
my $SUBCOMMANDS = 'report, train, prune, list, rollback or history';

# The manual, installed beside the modules as cmrx-dict.pod (so that
# `perldoc cmrx-dict` finds it).
my $MANUAL = 'cmrx-dict.pod';

sub main {
    my @args = @_;
    local $Cache::Memcached::RustXS::Dict::CLI::progress
        = Cache::Memcached::RustXS::Dict::Progress->new(on => -t STDERR, rewrite => 1);
    local $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock;
    my $ok = eval { set_clock_from_environment(); dispatch(@args); 1 };
    return $EXIT{ok} if $ok;
    my $err = $@;
    my ($kind, $message) = ref $err && eval { $err->isa('Cache::Memcached::RustXS::Dict::Error') }
        ? ($err->kind, $err->message) : ('failure', "$err");
    # For people: no source file and line, no internal sub's name.
    ($message = Cache::Memcached::RustXS::_error_message($message)) =~ s/\s+\z//;
    $message =~ s/\A(?:add|retire|cancel|remove|write|[a-z]+(?:_[a-z]+)+): //;
    $Cache::Memcached::RustXS::Dict::CLI::progress->clear;
    print STDERR "cmrx-dict: $message", ($kind eq 'usage' ? '; see cmrx-dict --help' : ''), "\n";
    return $EXIT{$kind} || $EXIT{failure};
}

# This run's progress line (on standard error, when it is a terminal or
# --progress is given); none for the subcommands called without main.
our $progress = Cache::Memcached::RustXS::Dict::Progress->new(on => 0);

# CMRX_DICT_NOW (epoch seconds): the commands act as if that were the time
# (what a set does at a later moment, tried without waiting for it).
sub set_clock_from_environment {
    my $now = $ENV{CMRX_DICT_NOW};
    return unless defined $now && length $now;
    usage_error("CMRX_DICT_NOW must be epoch seconds, not '$now'") unless $now =~ /\A[0-9]+(?:\.[0-9]+)?\z/;
    $Cache::Memcached::RustXS::Zstd::DictionarySet::State::Clock = sub { $now };
    return;
}

sub usage_error { die Cache::Memcached::RustXS::Dict::Error->new(usage => $_[0]) }

sub dispatch {
    my @args = @_;
    usage_error("a subcommand is needed: $SUBCOMMANDS") unless @args;
    my $command = shift @args;
    return show_help() if $command eq '--help' || $command eq '-h' || $command eq 'help';
    if ($command eq '--version') {
        print "cmrx-dict $VERSION\n";
        return;
    }
    usage_error("unknown option $command before the subcommand ($SUBCOMMANDS)") if $command =~ /\A-/;
    return cmd_report(@args)   if $command eq 'report';
    return cmd_train(@args)    if $command eq 'train';
    return cmd_prune(@args)    if $command eq 'prune';
    return cmd_list(@args)     if $command eq 'list';
    return cmd_rollback(@args) if $command eq 'rollback';
    return cmd_history(@args)  if $command eq 'history';
    usage_error("unknown subcommand '$command' ($SUBCOMMANDS)");
}

sub show_help {
    Pod::Usage::pod2usage(-input => manual(), -verbose => 99, -exitval => 'NOEXIT', -output => \*STDOUT,
                          -sections => [ 'SYNOPSIS', 'OPTIONS', 'EXIT STATUS' ]);
    print "The whole manual: perldoc cmrx-dict (or man cmrx-dict).\n";
    return;
}

# The manual's file: beside this module's tree (lib, blib/lib or where
# it is installed), else anywhere in @INC.
sub manual {
    (my $root = $INC{'Cache/Memcached/RustXS/Dict/CLI.pm'} || '') =~ s{Cache/Memcached/RustXS/Dict/CLI\.pm\z}{};
    for my $dir (grep { !ref } (length $root ? $root : ()), @INC) {
        my $file = File::Spec->catfile($dir, $MANUAL);
        return $file if -f $file;
    }
    fail("the manual ($MANUAL) is not installed");
}

# ---- report ---------------------------------------------------------------------

sub cmd_report {
    my @args = @_;
    my $opt = parse_options('report', \@args, qw(server=s@ delimiter=s sample=s size=s
                                                 prefix=s@ dictionary=s@ timeout=s json
                                                 dictionaries=s uses-cas), @SET_OPTIONS, @SCALE_OPTIONS);
    return show_help() if $opt->{help};
    return cmd_report_set($opt, \@args) if defined $opt->{dictionaries};
    usage_error('report: --uses-cas is for --server') if $opt->{'uses-cas'} && !defined $opt->{server};
    usage_error('report: --if-better is for --dictionaries') if defined $opt->{'if-better'};
    usage_error('report: --server HOST:PORT is needed') unless defined $opt->{server};
    usage_error("report takes no arguments besides its options, not '$args[0]'") if @args;
    my $size_given = defined $opt->{size};
    check_common($opt);
    my %tuning = tuning_options($opt, $size_given);
    load_dictionary_file($_) for @{ $opt->{dictionary} || [] };

    my $server = connect_servers($opt);
    my $listing = list_keys($server, delimiter => $opt->{delimiter}, per_prefix => $opt->{sample},
                            prefixes => $opt->{prefix}, max_prefixes => $opt->{'max-prefixes'},
                            progress => listing_progress());
    say_prefixes_are_ids($listing);
    $tuning{memory} = Cache::Memcached::RustXS::Dict::SlabModel->from_server($server);
    my @groups = sort { $b->{item_bytes} <=> $a->{item_bytes} || $a->{prefix} cmp $b->{prefix} }
                 values %{ $listing->{groups} };
    my $written = '';
    my $workers = Cache::Memcached::RustXS::Dict::Workers->new(jobs => $opt->{jobs});
    $progress->start_count(scalar @groups, 'prefixes measured');
    for my $i (0 .. $#groups) {
        my $g = $groups[$i];
        my $tag = sprintf 'prefix %d/%d, %s', $i + 1, scalar @groups, shown($g->{prefix});
        my $values = fetch_values($server, $g, progress => fetch_progress($tag));
        delete $g->{node_of};
        # Measured in a process of its own, while the next prefix is fetched.
        $workers->run(sub {
            my @frame_sizes;
            my $held = measure_held_out($values, keys => $g->{value_keys}, frame_sizes => \@frame_sizes,
                                        tune => { %tuning, keys => $g->{keys} });
            $g->{held_out} = $held;
            return { held_out => $held, written => pack_items([ report_items($g, $values, \@frame_sizes) ]) };
        }, sub {
            my ($measured) = @_;
            $g->{held_out} = $measured->{held_out};
            $written .= $measured->{written};
            delete $g->{value_keys};
            $progress->count_done(measured_line($g), $workers->running);
        });
        undef $values;
        $progress->show_count($workers->running);
    }
    $workers->wait_all;
    my $advice = advise(items => [ unpack_items($written) ], nodes => [ map { node_facts($_) } server_nodes($server) ],
                        uses_cas => $opt->{'uses-cas'});
    $progress->clear;
    $server->close;

    my $report = report_data(server => $server->spec, delimiter => $opt->{delimiter},
                             sample => $opt->{sample}, dictionary_size => $size_given ? $opt->{size} : undef,
                             memory => $tuning{memory}, listing => $listing, groups => \@groups);
    $report->{memcached_settings} = advice_data($advice);
    if ($opt->{json}) { print_json(\*STDOUT, $report) }
    else              { print_report(\*STDOUT, $report); print_advice(\*STDOUT, $advice) }
    return;
}

# The nodes of a source: a pool's, or the one server.
sub server_nodes { $_[0]->can('nodes') ? $_[0]->nodes : ($_[0]) }

# ---- train ----------------------------------------------------------------------

sub cmd_train {
    my @args = @_;
    my $opt = parse_options('train', \@args, qw(server=s@ prefix=s@ out=s size=s delimiter=s
                                                sample=s dictionary=s@ timeout=s null json force
                                                all out-dir=s stage=s), @SET_OPTIONS, @SCALE_OPTIONS);
    return show_help() if $opt->{help};
    return cmd_train_all($opt, \@args) if $opt->{all};
    _check_train_options($opt);
    my $size_given = defined $opt->{size};
    check_common($opt);
    my %tuning = tuning_options($opt, $size_given);
    if (defined $opt->{server}) {
        usage_error('train: --prefix P is needed with --server') unless defined $opt->{prefix};
        usage_error("train: with --server, no file arguments ('$args[0]')") if @args;
        usage_error('train: --null is for samples read from standard input (-)') if $opt->{null};
    } else {
        usage_error('train: --server HOST:PORT, or sample files (or - for standard input), are needed')
            unless @args;
        usage_error('train: --prefix is for samples from a server (--server)') if defined $opt->{prefix};
        usage_error('train: standard input (-) can be given once') if 1 < grep { $_ eq '-' } @args;
        usage_error('train: --null is for samples read from standard input (-)')
            if $opt->{null} && !grep { $_ eq '-' } @args;
    }
    fail("$opt->{out} exists (it may be a dictionary that stored values name; --force replaces it)")
        if -e $opt->{out} && !$opt->{force};
    load_dictionary_file($_) for @{ $opt->{dictionary} || [] };

    my ($source, $values) = defined $opt->{server} ? server_samples($opt) : file_samples($opt, \@args);
    my $of = defined $opt->{server} ? "values of prefix '$opt->{prefix}'" : 'samples';
    fail('no ' . $of . ' to train on' . ($source->{group} ? skipped_note($source->{group}) : ''))
        unless @$values;

    # The keys the dictionary is for: a server's count of the prefix's keys;
    # from files, unknown (its bytes are then not counted).
    my $g = $source->{group};
    $tuning{memory} = $source->{memory} || Cache::Memcached::RustXS::Dict::SlabModel->new;
    $tuning{keys} = $g->{keys} if $g;
    my @keys = $g ? @{ $g->{value_keys} } : ();
    $progress->show('tuning on the even half, measuring on the odd half');
    my $held = measure_held_out($values, keys => \@keys,
                                tune => { %tuning, progress => sub { $progress->show("tuning: $_[0]") } });
    my $bytes = sum_length($values);
    my $choice = $held->{zstd_dict};
    my $why;
    if (!$choice) {
        # Too few values for the held-out half: tuned on all of them.
        $progress->show('tuning on every value');
        my $tuned = Cache::Memcached::RustXS::Dict::Tune::tune(
            %tuning, samples => [ map { [ defined $keys[$_] ? $keys[$_] : 'sample:0000000001', $values->[$_] ] }
                                  0 .. $#$values ]);
        ($choice, $why) = ($tuned->{choice}, $tuned->{no_dictionary});
    }
    $progress->show('training the dictionary');
    my $dict;
    ($dict, $why) = train_choice($values, $choice) if $choice;
    $progress->clear;
    fail(sprintf "cannot train a dictionary on %d %s (%d bytes): %s%s", scalar @$values, $of, $bytes, $why,
                 ($why =~ /few|could not train/ ? '; at least a few hundred values help' : ''))
        unless defined $dict;
    write_file($opt->{out}, $dict);
    my $id = load_dictionary_file($opt->{out});

    my $result = train_data(source => $source, values => $values, sample_bytes => $bytes,
                            dictionary_size => $size_given ? $opt->{size} : undef, held_out => $held,
                            file => $opt->{out}, dictionary => $dict, id => $id,
                            choice => { map { defined $choice->{$_} ? ($_ => $choice->{$_}) : () }
                                        qw(method size level k d) });
    if ($opt->{json}) { print_json(\*STDOUT, $result) }
    else              { print_train(\*STDOUT, $result) }
    return;
}

# What single-prefix train refuses or needs, before any work.
sub _check_train_options {
    my ($opt) = @_;
    usage_error('train: --out-dir is for --all') if defined $opt->{'out-dir'};
    usage_error('train: --stage is for --all (a dictionary written to --out is used when loaded)')
        if defined $opt->{stage};
    usage_error('train: --if-better is for --all') if defined $opt->{'if-better'};
    # One prefix, tuned in this process: nothing to share among processes.
    for my $name (grep { defined $opt->{$_} } qw(jobs max-prefixes)) {
        usage_error("train: --$name is for --all (without it, one prefix is tuned)");
    }
    usage_error('train: --prefix can be given once (without --all)') if $opt->{prefix} && @{ $opt->{prefix} } > 1;
    $opt->{prefix} = $opt->{prefix}[0] if $opt->{prefix};
    usage_error('train: --out FILE is needed') unless defined $opt->{out} && length $opt->{out};
    return;
}

# The tuning options as Dict::Tune's tune takes them: the speed limits, the
# largest size, --size (which fixes the size tried), the levels and the
# methods tried.
sub tuning_options {
    my ($opt, $size_given) = @_;
    my %num = numeric_options($opt, qw(compress-time decompress-time));
    check_max_size($opt);
    my %choices;
    for my $name (qw(levels methods)) {
        next unless defined $opt->{$name};
        $choices{$name} = [ split /,/, $opt->{$name}, -1 ];
        my $why = Cache::Memcached::RustXS::Dict::Tune::choices_error(%choices);
        usage_error("--$name: $why (a list separated by commas: "
                    . ($name eq 'levels' ? '3,9' : 'samples,fastcover') . ')') if $why;
    }
    return (compress_time => $num{'compress-time'}, decompress_time => $num{'decompress-time'},
            max_size => $opt->{'max-size'}, ($size_given ? (sizes => [ $opt->{size} ], max_size => $opt->{size}) : ()),
            %choices);
}

sub numeric_options {
    my ($opt, @names) = @_;
    my %num;
    for my $name (@names) {
        next unless defined $opt->{$name};
        usage_error("--$name must be a number, 0 or more, not '$opt->{$name}'")
            unless $opt->{$name} =~ /\A(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\z/;
        $num{$name} = 0 + $opt->{$name};
    }
    return %num;
}

sub check_max_size {
    my ($opt) = @_;
    if (defined $opt->{'max-size'}) {
        usage_error("--max-size must be a whole number of bytes, $MIN_DICT or more, not '$opt->{'max-size'}'")
            unless $opt->{'max-size'} =~ /\A[0-9]+\z/ && $opt->{'max-size'} >= $MIN_DICT;
    }
    return;
}

# The tuner's choice (method, size, level, and cover's k and d) trained on
# every value, as train --all writes it (under a random ID, as zstd gives
# one): (bytes) or (undef, why).
sub train_choice {
    my ($values, $c) = @_;
    my %how = (size => $c->{size}, method => $c->{method}, level => $c->{level});
    @how{qw(k d steps)} = ($c->{k}, $c->{d}, 0) if $c->{method} ne 'samples';
    my ($dict) = eval { Cache::Memcached::RustXS::Zstd::train_dictionary_with_parameters($values, %how) };
    return ($dict) if defined $dict;
    my $why = Cache::Memcached::RustXS::_error_message($@);
    $why =~ s/\Atrain_dictionary_with_parameters: //;
    return (undef, $why);
}

# ---- dictionary sets: train --all, report --dictionaries -------------------------------

sub cmd_train_all {
    my ($opt, $args) = @_;
    usage_error('train --all: --out-dir DIR is needed') unless defined $opt->{'out-dir'} && length $opt->{'out-dir'};
    usage_error('train --all writes a set into --out-dir, not --out') if defined $opt->{out};
    usage_error('train --all: --force is not needed: a set is added to, never overwritten') if $opt->{force};
    my $stage = stage_option($opt);
    return run_set_command('train --all', $opt, $args,
                           sub { train_all(@_, dir => $opt->{'out-dir'}, stage => $stage) }, \&print_train_all);
}

sub cmd_report_set {
    my ($opt, $args) = @_;
    # The memcached settings are advised from what the set writes, measured
    # in each prefix's own process.
    my @written = defined $opt->{server}
        ? (written_items => sub { set_written_items($opt->{dictionaries}, @_) }) : ();
    return run_set_command('report --dictionaries', $opt, $args,
                           sub { report_set(@_, dir => $opt->{dictionaries}, @written) }, \&print_report_set);
}

# A set command run on its source, its result printed as text or JSON.
sub run_set_command {
    my ($what, $opt, $args, $run, $print_text) = @_;
    my %common = set_command($what, $opt, $args);
    my $result = $run->(%common);
    say_prefixes_are_ids($result->{listing});
    my $advice = $what eq 'report --dictionaries' && defined $opt->{server}
        ? advise(items => [ set_items($result) ], uses_cas => $opt->{'uses-cas'},
                 nodes => [ map { node_facts($_) } server_nodes($common{source}) ])
        : undef;
    $progress->clear;
    $common{source}->close;
    if ($opt->{json}) { print_json(\*STDOUT, { %{ set_data($result) }, $advice ? (memcached_settings => advice_data($advice)) : () }) }
    else              { $print_text->(\*STDOUT, $result); print_advice(\*STDOUT, $advice) }
    return;
}

# The source, the memory model and the tuning options of a set command.
sub set_command {
    my ($what, $opt, $args) = @_;
    usage_error("$what: --null is for samples one per line; files here are memcached get responses")
        if $opt->{null};
    if (defined $opt->{server}) {
        usage_error("$what: with --server, no file arguments ('$args->[0]')") if @$args;
    } else {
        usage_error("$what: --server HOST:PORT, or files of memcached get responses (or - for "
                    . 'standard input), are needed') unless @$args;
        usage_error("$what: standard input (-) can be given once") if 1 < grep { $_ eq '-' } @$args;
    }
    my $size_given = defined $opt->{size};
    check_common($opt);
    my %tuning = tuning_options($opt, $size_given);
    my %num = numeric_options($opt, qw(if-better));
    load_dictionary_file($_) for @{ $opt->{dictionary} || [] };
    my ($source, $memory);
    if (defined $opt->{server}) {
        $source = connect_servers($opt);
        $memory = Cache::Memcached::RustXS::Dict::SlabModel->from_server($source);
    } else {
        $source = Cache::Memcached::RustXS::Dict::Files->read($args);
        $memory = Cache::Memcached::RustXS::Dict::SlabModel->new;
    }
    return (%tuning, source => $source, memory => $memory, delimiter => $opt->{delimiter},
            sample => $opt->{sample}, prefixes => $opt->{prefix}, if_better => $num{'if-better'},
            jobs => $opt->{jobs}, max_prefixes => $opt->{'max-prefixes'}, counter => $progress,
            progress => sub { $progress->show($_[0]) }, listing_progress => listing_progress());
}

sub server_samples {
    my ($opt) = @_;
    my $server = connect_servers($opt);
    my $listing = list_keys($server, delimiter => $opt->{delimiter}, per_prefix => $opt->{sample},
                            prefixes => [ $opt->{prefix} ], progress => listing_progress());
    my $g = $listing->{groups}{ $opt->{prefix} };
    fail("no key of @{[ $server->spec ]} has the prefix '$opt->{prefix}' (delimiter '$opt->{delimiter}'; "
         . "$listing->{keys} keys listed)") unless $g && @{ $g->{sample} };
    my $values = fetch_values($server, $g, progress => fetch_progress(shown($g->{prefix})));
    my $memory = Cache::Memcached::RustXS::Dict::SlabModel->from_server($server);
    $server->close;
    return ({ server => $server->spec, prefix => $opt->{prefix},
              delimiter => $opt->{delimiter}, group => $g, memory => $memory }, $values);
}

sub file_samples {
    my ($opt, $args) = @_;
    my $read = read_sample_files($args, null => $opt->{null});
    return ({ files => $read->{files}, stdin => $read->{stdin}, empty => $read->{empty} }, $read->{values});
}

# ---- prune ----------------------------------------------------------------------------

sub cmd_prune {
    my @args = @_;
    my $opt = parse_options('prune', \@args, qw(dictionaries=s server=s@ retired-for=s dry-run
                                                delimiter=s sample=s timeout=s json max-prefixes=s progress));
    return show_help() if $opt->{help};
    usage_error('prune: --dictionaries DIR is needed') unless defined $opt->{dictionaries} && length $opt->{dictionaries};
    if (defined $opt->{server}) {
        usage_error("prune: with --server, no file arguments ('$args[0]')") if @args;
    } else {
        usage_error('prune: --server HOST:PORT, or files of memcached get responses (or - for standard '
                    . 'input), are needed') unless @args;
        usage_error('prune: standard input (-) can be given once') if 1 < grep { $_ eq '-' } @args;
    }
    my $retired_for = $Cache::Memcached::RustXS::Dict::Prune::DEFAULT_RETIRED_FOR;
    if (defined $opt->{'retired-for'}) {
        $retired_for = parse_duration($opt->{'retired-for'});
        usage_error("--retired-for must be a duration: a number and s, m, h, d or w (7d, 36h, 3600s), "
                    . "or a number of seconds, not '$opt->{'retired-for'}'") unless defined $retired_for;
    }
    check_common($opt);
    # The set first: a folder that is not one fails before the server is asked.
    Cache::Memcached::RustXS::Dict::Prune::read_set($opt->{dictionaries});
    my $source = defined $opt->{server}
        ? connect_servers($opt)
        : Cache::Memcached::RustXS::Dict::Files->read(\@args);
    my $result = prune_set(dir => $opt->{dictionaries}, source => $source, delimiter => $opt->{delimiter},
                           sample => $opt->{sample}, retired_for => $retired_for, dry_run => $opt->{'dry-run'},
                           max_prefixes => $opt->{'max-prefixes'},
                           progress => sub { $progress->show($_[0]) }, listing_progress => listing_progress());
    $progress->clear;
    $source->close;
    if ($opt->{json}) { print_json(\*STDOUT, prune_data($result)) }
    else              { print_prune(\*STDOUT, $result) }
    return;
}

# ---- list and rollback ------------------------------------------------------------

sub cmd_list {
    my @args = @_;
    my $opt = parse_options('list', \@args, qw(dictionaries=s json));
    return show_help() if $opt->{help};
    usage_error('list: --dictionaries DIR is needed') unless defined $opt->{dictionaries} && length $opt->{dictionaries};
    usage_error("list: no arguments after the options ('$args[0]')") if @args;
    my $list = list_set(dir => $opt->{dictionaries});
    if ($opt->{json}) { print_json(\*STDOUT, list_data($list)) }
    else              { print_list(\*STDOUT, $list) }
    return;
}

sub cmd_rollback {
    my @args = @_;
    my $opt = parse_options('rollback', \@args, qw(dictionaries=s prefix=s to=s stage=s dry-run json));
    return show_help() if $opt->{help};
    usage_error('rollback: --dictionaries DIR is needed')
        unless defined $opt->{dictionaries} && length $opt->{dictionaries};
    usage_error("rollback: --prefix P is needed (--prefix '' for the whole cache)") unless defined $opt->{prefix};
    usage_error("rollback: no arguments after the options ('$args[0]')") if @args;
    usage_error("rollback: --to must be a dictionary ID, not '$opt->{to}'")
        if defined $opt->{to} && $opt->{to} !~ /\A[1-9][0-9]{0,9}\z/;
    # Without --stage, the rule's timing: at once to a dictionary writers
    # have used, staged by the default to one they have not.
    my $stage = defined $opt->{stage} ? stage_option($opt) : undef;
    my $result = rollback_set(dir => $opt->{dictionaries}, prefix => $opt->{prefix}, to => $opt->{to},
                              stage => $stage, dry_run => $opt->{'dry-run'});
    if ($opt->{json}) { print_json(\*STDOUT, rollback_data($result)) }
    else              { print_rollback(\*STDOUT, $result) }
    return;
}

sub cmd_history {
    my @args = @_;
    my $opt = parse_options('history', \@args, qw(dictionaries=s prefix=s json));
    return show_help() if $opt->{help};
    usage_error('history: --dictionaries DIR is needed')
        unless defined $opt->{dictionaries} && length $opt->{dictionaries};
    usage_error("history: no arguments after the options ('$args[0]')") if @args;
    my $history = history_set(dir => $opt->{dictionaries}, prefix => $opt->{prefix});
    if ($opt->{json}) { print_json(\*STDOUT, history_data($history)) }
    else              { print_history(\*STDOUT, $history) }
    return;
}

# --stage DURATION: whole seconds (a fraction counts as a second: the
# manifest's dates are to the second), or the default.
sub stage_option {
    my ($opt) = @_;
    return $Cache::Memcached::RustXS::Dict::Rollout::DEFAULT_STAGE unless defined $opt->{stage};
    my $stage = parse_duration($opt->{stage});
    usage_error("--stage must be a duration: a number and s, m, h, d or w (1h, 90m, 0 for at once), "
                . "not '$opt->{stage}'") unless defined $stage;
    return $stage == int $stage ? $stage : int($stage) + 1;
}

# ---- options --------------------------------------------------------------------

sub parse_options {
    my ($command, $args, @spec) = @_;
    my %opt;
    my @complaints;
    {
        local $SIG{__WARN__} = sub { push @complaints, $_[0] };
        Getopt::Long::Configure(qw(no_ignore_case no_auto_abbrev no_getopt_compat permute));
        Getopt::Long::GetOptionsFromArray($args, \%opt, @spec, 'help|h');
    }
    if (@complaints) {
        (my $first = $complaints[0]) =~ s/\s+\z//;
        $first =~ s/\AUnknown option: (.*)\z/unknown option --$1/;
        $first = lcfirst $first;
        usage_error("$command: $first");
    }
    return \%opt;
}

sub check_common {
    my ($opt) = @_;
    if (defined $opt->{server}) {
        my %given;
        $opt->{server} = [ map {
            my $spec = $_;
            usage_error("--server $spec is given twice (once per node of a pool)") if $given{$spec}++;
            Cache::Memcached::RustXS::Dict::NodeReader->parse_address($spec)
                or usage_error("--server must be HOST:PORT, [IPv6]:PORT or the path of a unix socket, not '$spec'");
        } @{ $opt->{server} } ];
    }
    for my $name (qw(delimiter sample size timeout)) {
        $opt->{$name} = $DEFAULT{$name} unless defined $opt->{$name};
    }
    usage_error("--delimiter must be one character other than a space or a control character, not '$opt->{delimiter}'")
        unless $opt->{delimiter} =~ /\A[^\x00-\x20\x7f]\z/;
    usage_error("--sample must be a whole number of keys, 1 or more, not '$opt->{sample}'")
        unless $opt->{sample} =~ /\A[0-9]+\z/ && $opt->{sample} >= 1;
    usage_error("--size must be a whole number of bytes, $MIN_DICT or more, not '$opt->{size}'")
        unless $opt->{size} =~ /\A[0-9]+\z/ && $opt->{size} >= $MIN_DICT;
    usage_error("--timeout must be a number of seconds above 0, not '$opt->{timeout}'")
        unless $opt->{timeout} =~ /\A(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\z/ && $opt->{timeout} > 0;
    $opt->{$_} += 0 for qw(sample size timeout);
    for my $name (qw(jobs max-prefixes)) {
        next unless defined $opt->{$name};
        usage_error("--$name must be a whole number, 1 or more, not '$opt->{$name}'")
            unless $opt->{$name} =~ /\A[0-9]+\z/ && $opt->{$name} >= 1;
        $opt->{$name} += 0;
    }
    $progress = Cache::Memcached::RustXS::Dict::Progress->new(on => 1, rewrite => -t STDERR) if $opt->{progress};
    # --prefix user and --prefix user: mean the same: the keys' group.
    if (defined $opt->{prefix}) {
        for my $p (ref $opt->{prefix} ? @{ $opt->{prefix} } : $opt->{prefix}) {
            $p =~ s/\Q$opt->{delimiter}\E\z// if length $p > 1;
        }
    }
    if ($opt->{json} && !eval { require JSON::PP; 1 }) {
        fail('--json needs the module JSON::PP, which is not installed (it is part of perl '
             . 'from 5.14; install it from CPAN on older perls)');
    }
    return;
}

# The source --server names: one server, or the pool of the nodes given
# (--server once per node).
sub connect_servers {
    my ($opt) = @_;
    my @addresses = @{ $opt->{server} };
    return Cache::Memcached::RustXS::Dict::NodeReader->connect($addresses[0], timeout => $opt->{timeout})
        if @addresses == 1;
    return Cache::Memcached::RustXS::Dict::Pool->connect(\@addresses, timeout => $opt->{timeout});
}

# ---- files --------------------------------------------------------------------------

# Writes the file whole or not at all (through a temporary file in the
# same folder, synced, renamed over it): the manifest's writer.
sub write_file {
    my ($path, $bytes) = @_;
    eval { atomic_write($path, $bytes); 1 } or do {
        (my $why = Cache::Memcached::RustXS::_error_message($@)) =~ s/\Awrite: //;
        fail($why);
    };
    return;
}

# ---- progress ------------------------------------------------------------------------

# One line, once: the listing found more prefixes than --max-prefixes (keys
# that start with an ID), and what it does about it.
sub say_prefixes_are_ids {
    my ($listing) = @_;
    my $rest = $listing && $listing->{rest} or return;
    $progress->clear;
    print STDERR "cmrx-dict: ", ids_note($listing), "\n";
    return;
}

# A prefix's result as soon as it is measured, for the progress lines.
sub measured_line {
    my ($g) = @_;
    my $h = $g->{held_out} || {};
    my $d = $h->{zstd_dict};
    my $what = !$h->{values} ? 'not measured (no held-out value)'
             : !$d ? 'no dictionary: ' . ($h->{zstd_dict_error} || '')
             : sprintf '%s %d, level %d: %d bytes for gzip -9\'s %d%s', $d->{method}, $d->{size}, $d->{level},
                       $d->{bytes}, $h->{memGzip}{bytes}, ($h->{zstd_dict_refused} ? ' (not worth it)' : '');
    return 'prefix ' . shown($g->{prefix}) . ": $what";
}

sub listing_progress {
    return sub { $progress->show($_[0] ? "listing keys: $_[0]" : 'listing keys') };
}

sub fetch_progress {
    my ($tag) = @_;
    return sub { $progress->show("$tag: fetching $_[0]/$_[1]") };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::CLI - the cmrx-dict command line: options, subcommands, exit statuses

=head1 SYNOPSIS

    use Cache::Memcached::RustXS::Dict::CLI;

    # What bin/cmrx-dict does:
    #   exit Cache::Memcached::RustXS::Dict::CLI::main(@ARGV);
    my $status = Cache::Memcached::RustXS::Dict::CLI::main('report', '--server', '127.0.0.1:11211');
    print "exit status $status\n";    # 0: done, 1: a failure, 2: a usage error

=head1 DESCRIPTION

The command L<cmrx-dict> (F<cmrx-dict.pod> is its manual: C<perldoc
cmrx-dict>). This module parses its options, runs the subcommand through
L<Cache::Memcached::RustXS::Dict::NodeReader>, L<Cache::Memcached::RustXS::Dict::Sample>,
L<Cache::Memcached::RustXS::Dict::Measure> and the modules of its output
(L<Cache::Memcached::RustXS::Dict::Report> and those under it), shows
progress on standard error when it is a terminal or C<--progress> is
given (L<Cache::Memcached::RustXS::Dict::Progress>), measures each prefix
in a worker process (L<Cache::Memcached::RustXS::Dict::Workers>), and turns errors into
one line on standard error and an exit status.

=head1 FUNCTIONS

=over 4

=item main(@arguments)

Runs the command with these arguments (as C<@ARGV>) and returns its exit
status (the manual's "EXIT STATUS"): 0 when done, 1 for a failure, 2 for a
usage error or a server the command cannot work with. It prints the
results on standard output and errors on standard error, C<cmrx-dict: >
first; it does not exit.

=item dispatch(@arguments)

The subcommand (C<report>, C<train>, C<prune>, C<list>, C<rollback>, C<history>, C<--help>, C<--version>) run with its
arguments; dies with a L<Cache::Memcached::RustXS::Dict/Cache::Memcached::RustXS::Dict::Error>
on errors (kind C<usage> for the command line's).

=item cmd_report(@arguments), cmd_train(@arguments), cmd_prune(@arguments), cmd_list(@arguments), cmd_rollback(@arguments), cmd_history(@arguments)

The subcommands, with the arguments after their name. C<prune> reads the
set first (a folder that is not a set fails before the server is asked),
then samples the server or the files through
L<Cache::Memcached::RustXS::Dict::Prune>.

=item server_samples(\%options), file_samples(\%options, \@files)

C<train>'s samples, C<(\%source, \@values)>: the values of C<--prefix>
on C<--server>, or the files and standard input given.

=item say_prefixes_are_ids($listing), measured_line($group)

The one line on standard error when the listing found more prefixes than
C<--max-prefixes> (L<Cache::Memcached::RustXS::Dict::Report/ids_note($listing)>);
a prefix's result as the progress lines show it once measured.

=item listing_progress, fetch_progress($tag)

The progress functions given to C<list_keys> and C<fetch_values>: what
the progress line says while keys are listed and values fetched.

=item tuning_options(\%options, $size_given), numeric_options(\%options, @names), check_max_size(\%options)

The tuning options of every subcommand but C<prune> as
L<Cache::Memcached::RustXS::Dict::Tune/"tune(%options)">'s arguments (C<--size>, when
given, the one size tried; C<--levels> and C<--methods> split at commas),
and their checks.

=item train_choice(\@values, $choice)

C<($dictionary_bytes)> or C<(undef, $why)>: the tuner's choice (C<method>,
C<size>, C<level>, C<k>, C<d>) trained on every value, as C<train> writes
it (with a random ID, as zstd gives one).

=item server_nodes($source)

The nodes of a L<Cache::Memcached::RustXS::Dict::Pool>, or the one
L<Cache::Memcached::RustXS::Dict::NodeReader>: those whose settings the
advisor of C<report> reads.

=item cmd_train_all(\%options, \@arguments), cmd_report_set(\%options, \@arguments)

C<train --all> and C<report --dictionaries>, with their options parsed:
through L<Cache::Memcached::RustXS::Dict::SetTrainer>.

=item run_set_command($what, \%options, \@arguments, $run, $print_text)

One of those two: C<set_command>'s arguments given to C<$run>, the source
closed, the result printed as JSON or by C<$print_text>.

=item set_command($what, \%options, \@arguments)

The checks of those two (a server, or files of get responses), their
source (a L<Cache::Memcached::RustXS::Dict::NodeReader>, or the files read),
the memory model (the server's classes, or the standard ones) and the
tuning options, as the arguments of
C<train_all> and C<report_set> (L<Cache::Memcached::RustXS::Dict::SetTrainer/FUNCTIONS>).

=item parse_options($command, \@arguments, @getopt_specs), check_common(\%options), stage_option(\%options)

The options of a subcommand (Getopt::Long, no abbreviations), and the
checks and defaults of the options both share (each C<--server> parsed
into an address).

=item set_clock_from_environment()

Sets the clock of L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>
from C<CMRX_DICT_NOW> (epoch seconds) when it is set: every subcommand
then acts as if that were the time. L</main(@arguments)> does it for the run.

=item connect_servers(\%options)

The source C<--server> names: a L<Cache::Memcached::RustXS::Dict::NodeReader>,
or, given once per node of a pool, a L<Cache::Memcached::RustXS::Dict::Pool>.

=item show_help, manual

Prints the synopsis, the options and the exit statuses of the manual
(C<--help>); the manual's file.

=item write_file($path, $bytes)

Writes C<$path> whole or not at all (a temporary file in its folder,
renamed).

=item usage_error($message)

Dies with an error of kind C<usage>.

=back

=head1 SEE ALSO

L<cmrx-dict>, the manual that C<--help> prints from; the modules the
subcommands run, L<Cache::Memcached::RustXS::Dict>.

=head1 AUTHOR

The Cache-Memcached-RustXS developers.

=head1 BUGS AND SUPPORT

Please report bugs at
L<https://github.com/cache-memcached-rustxs/Cache-Memcached-RustXS/issues>.

=head1 COPYRIGHT AND LICENSE

Copyright (C) 2026 the Cache-Memcached-RustXS developers.

This library is free software; you can redistribute it and/or modify it
under the same terms as Perl itself.

=cut

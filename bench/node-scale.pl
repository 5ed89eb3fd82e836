#!/usr/bin/perl
# cmrx-dict against nodes of a production's shape, growing: builds a
# memcached node (-m 2048 -o lru_crawler, a free loopback port) of KEYS
# keys under PREFIXES prefixes plus ID-FIRST keys whose prefix is an ID
# (`%08x%08x:v`), real JSON values of 100 B to 7 KB from bench/data,
# then runs report, train --all, report --dictionaries and prune on it,
# each timed, with the peak resident memory of its whole process tree.
#
#   perl -Mblib bench/node-scale.pl                           # 50,000 keys, 10 prefixes
#   perl -Mblib bench/node-scale.pl --keys 1000000 --prefixes 200 --id-first 100000
#   perl -Mblib bench/node-scale.pl --keys 10000 --prefixes 2 --id-first 300000
#
# See bench/README.md ("cmrx-dict on large nodes").
use strict;
use warnings;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";
use File::Path ();
use File::Temp ();
use Getopt::Long ();
use POSIX ();

use CMRXDev::Corpus qw(corpus_values);
use CMRXDev::Memcached ();
use CMRXDev::NodeFill qw(fill_node id_first_key);
use CMRXBench::Memory qw(commas table);
use CMRXBench::ProcessTree qw(run_measured);

STDERR->autoflush(1);
my %opt = (keys => 50_000, prefixes => 10, 'id-first' => 0, memory => 2048,
           commands => 'report,train,report-dictionaries,prune');
Getopt::Long::GetOptions(\%opt, 'keys=i', 'prefixes=i', 'id-first=i', 'memory=i', 'commands=s', 'help|h')
    && !$opt{help} && $opt{prefixes} >= 1 && $opt{keys} >= $opt{prefixes}
    or die "usage: perl -Mblib bench/node-scale.pl [--keys N] [--prefixes P] [--id-first N] [--memory MB]\n"
         . "       [--commands report,train,report-dictionaries,prune]\n";
my @COMMANDS = split /,/, $opt{commands};
my %KNOWN = map { ($_ => 1) } qw(report train report-dictionaries prune);
$KNOWN{$_} or die "node-scale.pl: no command '$_' (report, train, report-dictionaries, prune)\n" for @COMMANDS;
# report --dictionaries and prune read the set train --all writes.
my ($trained) = grep { $COMMANDS[$_] eq 'train' } 0 .. $#COMMANDS;
for my $i (grep { $COMMANDS[$_] =~ /\A(?:report-dictionaries|prune)\z/ } 0 .. $#COMMANDS) {
    die "node-scale.pl: $COMMANDS[$i] needs train before it in --commands\n" unless defined $trained && $trained < $i;
}

# ---- the values: the JSON families' values of 100 B to 7 KB -----------------------

my $corpus = corpus_values("$FindBin::Bin/data/values");
my @values = grep { length($_) >= 100 && length($_) <= 7 * 1024 } map { $_->[1] } map { @{ $corpus->{$_} } } qw(gh npm compat);
# A prefix's values: a family's, in turn (prefix i takes every values-th
# value from i on), so that prefixes differ as a site's kinds of value do.
my %family_values = map { my $f = $_; ($f => [ grep { length($_) >= 100 && length($_) <= 7 * 1024 } map { $_->[1] } @{ $corpus->{$f} } ]) }
                    qw(gh npm compat);
my @FAMILIES = sort keys %family_values;

# ---- the node ------------------------------------------------------------------------

my $server = CMRXDev::Memcached->start(args => [ '-m', $opt{memory}, '-o', 'lru_crawler' ]);
my $address = $server->address;
my $per_prefix = int($opt{keys} / $opt{prefixes});
my ($i, $total) = (0, $per_prefix * $opt{prefixes} + $opt{'id-first'});
my $t0 = time;
print STDERR "filling $address: ", commas($total), " keys\n";
fill_node($address, sub {
    return undef if $i >= $total;
    my $n = $i++;
    if ($n < $per_prefix * $opt{prefixes}) {
        # Keys of a prefix interleaved with the others', as sets arrive.
        my ($p, $k) = ($n % $opt{prefixes}, int($n / $opt{prefixes}));
        my $vals = $family_values{ $FAMILIES[ $p % @FAMILIES ] };
        return [ sprintf('site%03d:%08d', $p, $k), $vals->[ ($k * 7 + $p) % @$vals ] ];
    }
    my $id = $n - $per_prefix * $opt{prefixes};
    return [ id_first_key($id), $values[ $id % @values ] ];
});
printf STDERR "filled in %d s\n", time - $t0;

# ---- the commands ------------------------------------------------------------------------

my $tmp = File::Temp->newdir;
my $out = "$FindBin::Bin/results";
File::Path::make_path($out);
my @inc = map { ('-I', $_) } grep { !ref } @INC;
my @cmrx = ($^X, @inc, "$FindBin::Bin/../bin/cmrx-dict");
my $set = "$tmp/set";
my %args = (
    report                => [ 'report', '--server', $address ],
    train                 => [ 'train', '--all', '--server', $address, '--out-dir', $set, '--stage', '0' ],
    'report-dictionaries' => [ 'report', '--dictionaries', $set, '--server', $address ],
    prune                 => [ 'prune', '--dictionaries', $set, '--server', $address, '--dry-run' ],
);
my %name = (report => 'report', train => 'train --all', 'report-dictionaries' => 'report --dictionaries',
            prune => 'prune --dry-run');
my @rows;
for my $command (@COMMANDS) {
    print STDERR "cmrx-dict $name{$command}\n";
    my $log = "$out/node-scale-$command.txt";
    my $r = run_measured([ @cmrx, @{ $args{$command} } ], $log, "$log.stderr");
    open my $fh, '<', $log or die "$log: $!\n";
    my @lines = <$fh>;
    $r->{output_lines} = scalar @lines;
    $r->{command} = $name{$command};
    push @rows, $r;
    printf STDERR "  %.1f s, %.0f MB, exit %d\n", $r->{seconds}, $r->{peak_rss} / 1048576, $r->{status};
}
$server->stop;

printf "cmrx-dict on a node of %s keys: %s prefixes of %s keys and %s keys whose prefix is an ID (%%08x%%08x:v); "
     . "memcached -m %d -o lru_crawler; JSON values of 100 B to 7 KB from bench/data; peak RSS of the "
     . "command's whole process tree\n\n",
    commas($total), commas($opt{prefixes}), commas($per_prefix), commas($opt{'id-first'}), $opt{memory};
table([ 'command', 'keys', 'prefixes', 'ID-first keys', 'wall time, s', 'peak RSS, MB', 'output lines', 'exit' ],
      map { [ $_->{command}, commas($total), commas($opt{prefixes}), commas($opt{'id-first'}),
              sprintf('%.1f', $_->{seconds}), sprintf('%.0f', $_->{peak_rss} / 1048576), $_->{output_lines},
              $_->{status} ] } @rows);
print "\nOutputs: bench/results/node-scale-COMMAND.txt (standard error beside, .stderr)\n";

if (eval { require JSON::PP; 1 }) {
    my $json = "$out/node-scale.json";
    open my $j, '>', $json or die "$json: $!\n";
    print {$j} JSON::PP->new->canonical->pretty->encode({
        date => POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime), keys => $total, prefixes => $opt{prefixes},
        keys_per_prefix => $per_prefix, id_first_keys => $opt{'id-first'}, memory_mb => $opt{memory},
        commands => \@rows,
    });
    close $j;
    print "results: bench/results/node-scale.json\n";
}
exit((grep { $_->{status} } @rows) ? 1 : 0);

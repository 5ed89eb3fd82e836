package CMRXBench::Runner;

# The one generic runner: for every row, check each implementation once
# (outside timing), calibrate an iteration count per implementation, then run
# interleaved rounds in rotating order and keep the median per-op time.
#
# A row is a hashref:
#   name    => 'parse 100x1KB'          (BENCH_FILTER matches this)
#   group   => 'parse'                  (used by the report)
#   impls   => [ impl, ... ]            (baselines first, ours last)
#   check   => sub { my ($impl) = @_; return ($error_or_undef, %info) }
#   setup   => sub { ... }              (optional, run once before checks)
#
# An implementation is a hashref:
#   label   => 'GetParserXS'
#   role    => 'baseline' | 'ours'
#   missing => undef | 'not built'      (reason it cannot run; never timed)
#   build   => sub { return $timed }    (optional: called after setup, returns
#                                        the timed closure, or dies)
#   op      => sub { ... }              (one operation, timed in a loop), or
#   timed   => sub { my ($n) = @_; ...; return $seconds }  (runs n ops and
#                                        returns the time it chose to count)
#
# After run_row each impl gains: status ('ok' | 'not built' | 'WRONG' |
# 'FAILED'), detail, info (from check), iterations, samples (per-op seconds,
# one per round), median.

use strict;
use warnings;
use Time::HiRes qw(clock_gettime CLOCK_MONOTONIC);
use Exporter 'import';

our @EXPORT_OK = qw(now loop_timed median);

sub now () { clock_gettime(CLOCK_MONOTONIC) }

# Wrap a plain one-operation closure into a timed closure.
sub loop_timed {
    my ($op) = @_;
    return sub {
        my $n  = shift;
        my $t0 = now;
        $op->() for 1 .. $n;
        return now - $t0;
    };
}

sub median {
    my @s = sort { $a <=> $b } @_;
    return undef unless @s;
    return @s % 2 ? $s[$#s / 2] : ($s[@s / 2 - 1] + $s[@s / 2]) / 2;
}

sub new {
    my ($class, %opt) = @_;
    return bless {
        rounds   => $opt{rounds}  // 15,
        seconds  => $opt{seconds} // 0.2,
        progress => $opt{progress} // sub { },    # ($index, $total, $row, $what)
    }, $class;
}

sub run_row {
    my ($self, $row, $index, $total) = @_;
    my $say = sub { $self->{progress}->($index, $total, $row, shift) };

    if ($row->{setup}) {
        $say->('setup');
        eval { $row->{setup}->($row); 1 } or do {
            my $err = _oneline($@);
            for my $impl (@{ $row->{impls} }) {
                next if $impl->{missing};
                @$impl{qw(status detail)} = ('FAILED', "setup: $err");
            }
            return $row;
        };
    }

    my @live;
    for my $impl (@{ $row->{impls} }) {
        if ($impl->{missing}) {
            @$impl{qw(status detail)} = ($impl->{missing}, $impl->{missing});
            next;
        }
        $say->("check $impl->{label}");
        my $timed = eval {
            my $t = $impl->{build} ? $impl->{build}->($impl, $row)
                  : $impl->{timed} ? $impl->{timed}
                  :                  loop_timed($impl->{op});
            my ($err, %info) = $row->{check} ? $row->{check}->($impl, $row) : ();
            $impl->{info} = \%info;
            die "WRONG: $err\n" if defined $err;
            $t;
        };
        if (!$timed) {
            my $err = _oneline($@);
            if ($err =~ s/^WRONG: //) { @$impl{qw(status detail)} = ('WRONG', $err) }
            else                      { @$impl{qw(status detail)} = ('FAILED', $err) }
            next;
        }
        $impl->{_timed} = $timed;
        $impl->{status} = 'ok';
        push @live, $impl;
    }

    # Calibrate: double n until a batch takes a tenth of the round budget,
    # then scale so one round of this implementation lasts about `seconds`.
    for my $impl (@live) {
        $say->("calibrate $impl->{label}");
        my $ok = eval {
            my $n = 1;
            my $dt = $impl->{_timed}->(1);    # warm-up
            while (1) {
                $dt = $impl->{_timed}->($n);
                last if $dt >= $self->{seconds} / 10 || $n >= 1 << 24;
                $n *= $dt > 0 ? _min(10, 2 * $self->{seconds} / 10 / $dt) : 10;
                $n = int($n + 0.5);
            }
            my $per = $dt / $n;
            $impl->{iterations} = _max(1, int($self->{seconds} / ($per || 1e-9) + 0.5));
            1;
        };
        if (!$ok) {
            @$impl{qw(status detail)} = ('FAILED', _oneline($@));
        }
    }
    @live = grep { $_->{status} eq 'ok' } @live;

    for my $round (1 .. $self->{rounds}) {
        my $k = @live or last;
        my @order = map { $live[($_ + $round) % $k] } 0 .. $k - 1;
        for my $impl (@order) {
            next unless $impl->{status} eq 'ok';
            $say->("round $round/$self->{rounds} $impl->{label}");
            my $dt = eval { $impl->{_timed}->($impl->{iterations}) };
            if (!defined $dt) {
                @$impl{qw(status detail)} = ('FAILED', _oneline($@));
                next;
            }
            push @{ $impl->{samples} }, $dt / $impl->{iterations};
        }
    }

    for my $impl (@{ $row->{impls} }) {
        delete $impl->{_timed};
        $impl->{median} = median(@{ $impl->{samples} || [] }) if $impl->{status} eq 'ok';
    }
    $row->{teardown}->($row) if $row->{teardown};
    return $row;
}

sub _oneline { my $s = shift // 'unknown error'; $s =~ s/\s+/ /g; $s =~ s/\s+$//; $s =~ s/ at \S+ line \d+\.?$//; $s }
sub _min { $_[0] < $_[1] ? $_[0] : $_[1] }
sub _max { $_[0] > $_[1] ? $_[0] : $_[1] }

1;

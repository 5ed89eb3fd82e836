package Cache::Memcached::RustXS::Dict::Rollout;

use strict;
use warnings;

use Exporter 5.57 'import';

use Cache::Memcached::RustXS ();
use Cache::Memcached::RustXS::Dict qw(fail);
use Cache::Memcached::RustXS::Dict::Report qw(prefix_text);
use Cache::Memcached::RustXS::Dict::Prune qw(read_set);
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest qw(manifest_date);
use Cache::Memcached::RustXS::Zstd::DictionarySet::State qw(now);

our $VERSION = '1.000';

our @EXPORT_OK = qw(list_set rollback_set history_set set_prefix);

# How long after it is written a dictionary that train --all adds, or a
# rollback, waits before writers use it: long enough for a set to reach
# every host (a configuration-management run every 30 minutes, say) and
# for every reader's rescan (60 s by default) to load it.
our $DEFAULT_STAGE = 3600;

# ---- list ------------------------------------------------------------------

sub list_set {
    my (%opt) = @_;
    my $set = read_set($opt{dir});
    my $now = defined $opt{now} ? $opt{now} : now();
    my @rows = map {
        my $e = $_->{entry};
        +{ id => 0 + $e->{id}, prefix => $e->{prefix}, state => $_->{state}, since => $_->{since},
           map { ($_ => $e->{$_}) } grep { defined $e->{$_} } qw(level size file trained savings) }
    } $set->schedule(at => $now);
    return { command => 'list', dir => $opt{dir}, identity => $set->identity, now => manifest_date($now),
             fallback => $set->fallback, next_change => manifest_date($set->next_change(at => $now)),
             dictionaries => \@rows };
}

# ---- rollback ----------------------------------------------------------------

# The rule (DictionarySet's "The newest decision holds"): without --to,
# a rollback while a decision is pending cancels it; else it goes back to
# what writers used before the current one. A dictionary writers have used
# is taken up at once unless a stage is given; one they have not, staged.
sub rollback_set {
    my (%opt) = @_;
    my $set = read_set($opt{dir}, to_change => 1);
    my $prefix = $opt{prefix};
    fail('rollback: a prefix is needed') unless defined $prefix;
    $prefix = set_prefix($set, $prefix);
    my $now = now();
    fail('rollback: the set in ' . $opt{dir} . ' has no dictionary for the prefix ' . prefix_text($prefix))
        unless grep { $_->{prefix} eq $prefix } $set->entries;
    my $d = $set->decided($prefix, at => $now);
    my $from = $d->{writer} ? 0 + $d->{writer}{id} : undef;
    my %result = (command => 'rollback', dir => $opt{dir}, prefix => $prefix, dry_run => $opt{dry_run} ? 1 : 0,
                  from => $from, cancelled => _decision_data($d->{pending}));
    if (!defined $opt{to} && $d->{pending}) {
        eval { $set->cancel($prefix); 1 } or fail(Cache::Memcached::RustXS::_error_message($@));
        $set->write unless $opt{dry_run};
        return { %result, kind => 'cancel', to => $from, at_once => 1, current_from => manifest_date($now) };
    }
    my $to = defined $opt{to} ? _named($set, $opt{to}, $prefix) : $d->{before};
    fail('rollback: the prefix ' . prefix_text($prefix) . ' has no earlier dictionary to go back to') unless $to;
    my $id = $to->{id};
    fail("rollback: dictionary $id is the current one of the prefix " . prefix_text($prefix)
         . ' already, and nothing is pending to replace it') if $from && $from == $id && !$d->{pending};
    my $stage = defined $opt{stage} ? $opt{stage} : $d->{used}{$id} ? 0 : $DEFAULT_STAGE;
    my $entry = eval { $set->make_current($id, $stage > 0 ? (stage => $stage) : (current_from => $now)) };
    fail(Cache::Memcached::RustXS::_error_message($@)) unless $entry;
    my $kind = ($set->history(prefix => $prefix, at => $now))[-1]{kind};
    $set->write unless $opt{dry_run};
    my ($last) = ($set->history(prefix => $prefix))[-1];
    return { %result, kind => $kind, to => 0 + ($kind eq 'cancel' ? $from : $id), at_once => $stage > 0 ? 0 : 1,
             current_from => manifest_date($stage > 0 ? $last->{effective} : $now) };
}

# The entry of --to ID, which must be of $prefix and still in the set.
sub _named {
    my ($set, $id, $prefix) = @_;
    my $e = $set->entry($id);
    fail("rollback: dictionary $id was removed from the set: its file is gone")
        if !$e && grep { $_->{id} eq $id } $set->removed;
    fail("rollback: the set has no dictionary with ID $id") unless $e;
    fail("rollback: dictionary $id is for the prefix " . prefix_text($e->{prefix}) . ', not ' . prefix_text($prefix))
        unless $e->{prefix} eq $prefix;
    return $e;
}

sub _decision_data {
    my ($d) = @_;
    return undef unless $d;
    return { seq => $d->{seq}, kind => $d->{kind}, id => $d->{id}, effective_date => manifest_date($d->{effective}) };
}

# A prefix as the set has it: given with or without the delimiter its
# prefixes end with (user and user: alike), the one the set knows.
sub set_prefix {
    my ($set, $prefix) = @_;
    # Every prefix the set has had: its dictionaries, removed ones too.
    my %known = map { ($_->{prefix} => 1) } $set->entries, $set->removed, $set->history;
    return $prefix if !length $prefix || $known{$prefix};
    my $delimiter = defined $set->delimiter ? $set->delimiter : ':';
    return $prefix . $delimiter if $known{ $prefix . $delimiter };
    (my $without = $prefix) =~ s/\Q$delimiter\E\z//;
    return length $without && $known{$without} ? $without : $prefix;
}

# ---- history ------------------------------------------------------------------

# The decisions of the set (of one prefix), in order, with what became of
# each at now: the same fold as list.
sub history_set {
    my (%opt) = @_;
    my $set = read_set($opt{dir});
    my $now = defined $opt{now} ? $opt{now} : now();
    my $prefix = defined $opt{prefix} ? set_prefix($set, $opt{prefix}) : undef;
    my @decisions = map {
        +{ seq => $_->{seq}, kind => $_->{kind}, prefix => $_->{prefix}, dictionary => $_->{id},
           made => manifest_date($_->{made}), effective => manifest_date($_->{effective}), status => $_->{status},
           (defined $_->{by} ? (superseded_by => $_->{by}) : ()),
           (defined $_->{cancels} ? (cancels => $_->{cancels}) : ()) }
    } $set->history(at => $now, (defined $prefix ? (prefix => $prefix) : ()));
    return { command => 'history', dir => $opt{dir}, identity => $set->identity, now => manifest_date($now),
             prefix => $prefix, decisions => \@decisions };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Rollout - cmrx-dict list, rollback and history: a dictionary set's schedule, going back to an earlier dictionary, the decisions in order

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
    use Cache::Memcached::RustXS::Zstd::DictionarySet;
    use Cache::Memcached::RustXS::Dict::Rollout qw(list_set rollback_set);
    use Cache::Memcached::RustXS::Dict::Report::Set qw(print_list print_rollback);

    # A set whose prefix user: was retrained, the new dictionary staged
    my $tmp = File::Temp->newdir;
    my @users = map { qq({"id":$_,"name":"user$_","plan":"free"}) } 1 .. 300;
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create("$tmp/set");
    my $first = $set->add(prefix => 'user:', dictionary => train_dictionary(\@users), level => 9,
                          id => $set->new_id);
    $set->add(prefix => 'user:', dictionary => train_dictionary([ reverse @users ]), level => 9,
              id => $set->new_id, current_from => time + 3600);
    $set->write;

    print_list(\*STDOUT, list_set(dir => "$tmp/set"));    # one current, one staged

    # Changed our mind before the hour: the staged one is cancelled
    my $r = rollback_set(dir => "$tmp/set", prefix => 'user:');
    print_rollback(\*STDOUT, $r);                          # stays: $first->{id}

=head1 DESCRIPTION

The parts of L<cmrx-dict> that show and change what writers use:
C<cmrx-dict list>, C<cmrx-dict rollback> and C<cmrx-dict history>. What
they do follows the rule in
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The newest decision holds>.
Their output, as text and as the data C<--json> prints, is
L<Cache::Memcached::RustXS::Dict::Report::Set>'s.

=head1 FUNCTIONS

=over 4

=item list_set(dir => $dir, now => $epoch)

Every dictionary of the set in C<$dir> with its state at C<now> (by
default the clock of L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>) and since
when (as L<Cache::Memcached::RustXS::Zstd::DictionarySet/schedule>
says): a hash reference with C<dir>, C<identity>, C<now>, C<fallback>,
C<next_change> (when a staged dictionary starts next, or C<undef>) and
C<dictionaries>, a list of C<< { id, prefix, state, since, level, size,
file, trained, savings } >> (C<state>: C<current>, C<staged>, C<retired> or
C<removed>). Fails (L<Cache::Memcached::RustXS::Dict/"fail($message)">) when the folder
holds no readable set.

=item rollback_set(dir => $dir, prefix => $prefix, to => $id, stage => $seconds, dry_run => 0)

A rollback of C<$prefix> (the empty string: the whole cache; with or
without the delimiter its keys end with), by the rule: without C<to>,
while a decision is pending for the prefix, a cancel of it, at once;
otherwise back to the dictionary writers used before the current one.
With C<to>, that dictionary. Without C<stage>, a rollback to a dictionary
writers have used takes effect at once, one to a dictionary they have not
is staged C<$DEFAULT_STAGE> seconds (an hour) after the write; with
C<stage>, that many seconds (0: at once). Writes the set unless
C<dry_run>. Returns a hash reference with C<kind> (C<rollback> or
C<cancel>), C<prefix>, C<from> (the dictionary writers use now, or undef),
C<to> (the one they will use), C<current_from> (when, as the written set
says), C<at_once>, C<cancelled> (the decision superseded or cancelled:
C<< { seq, kind, id, effective_date } >>, or undef) and C<dry_run>.
Fails when the prefix has no dictionary, C<to> is another prefix's,
removed or unknown, its file is missing or is not the one the manifest
lists, or there is nothing to go back to.

=item history_set(dir => $dir, prefix => $prefix, now => $epoch)

The decisions of the set (of one prefix, given with or without its
delimiter), in order, with what became of each at C<now>: a hash
reference with C<dir>, C<identity>, C<now>, C<prefix> and
C<decisions>, a list of C<< { seq, kind, prefix, dictionary, made,
effective, status, superseded_by, cancels } >> (dates as the manifest
writes them).

=item set_prefix($set, $prefix)

The prefix as the set has it: C<$prefix> itself when the set has it,
else with the set's delimiter (C<:> for a set without one) added, or
taken off.

=back

=head1 SEE ALSO

L<cmrx-dict> (list, rollback, history) and the rule they follow,
L<Cache::Memcached::RustXS::Zstd::DictionarySet/The newest decision holds>.

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

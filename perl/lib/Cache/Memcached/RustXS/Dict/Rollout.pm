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

our @EXPORT_OK = qw(list_set rollback_set);

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

sub rollback_set {
    my (%opt) = @_;
    my $set = read_set($opt{dir});
    my $prefix = $opt{prefix};
    fail('rollback: a prefix is needed') unless defined $prefix;
    my $now = now();
    my $stage = defined $opt{stage} ? $opt{stage} : $DEFAULT_STAGE;
    my %state = map { ($_->{entry}{id} => $_) } $set->schedule(at => $now);
    my @mine = grep { $_->{entry}{prefix} eq $prefix && $_->{state} ne 'removed' } values %state;
    fail('rollback: the set in ' . $opt{dir} . ' has no dictionary for the prefix ' . prefix_text($prefix))
        unless @mine;
    my ($current) = grep { $_->{state} eq 'current' } @mine;
    my @staged = grep { $_->{state} eq 'staged' } @mine;
    # By default: while a retrain is staged, the current one (the retrain
    # is cancelled); else the one writers used before the current one.
    my $previous = $set->previous($prefix, at => $now);
    my $to = defined $opt{to} ? $state{ $opt{to} }
           : @staged && $current ? $current
           : $previous ? $state{ $previous->{id} } : undef;
    if (defined $opt{to}) {
        fail("rollback: the set has no dictionary with ID $opt{to}") unless $to;
        fail("rollback: dictionary $opt{to} is for the prefix " . prefix_text($to->{entry}{prefix})
           . ', not ' . prefix_text($prefix)) unless $to->{entry}{prefix} eq $prefix;
        fail("rollback: dictionary $opt{to} was removed from the set: its file is gone") if $to->{state} eq 'removed';
    }
    fail('rollback: the prefix ' . prefix_text($prefix) . ' has no earlier dictionary to go back to') unless $to;
    my $at_once = $to == ($current || 0) || $stage <= 0;
    my $id = $to->{entry}{id};
    my $entry = eval { $set->make_current($id, $at_once ? (current_from => $now) : (stage => $stage)) };
    fail(Cache::Memcached::RustXS::_error_message($@)) unless $entry;
    $set->write unless $opt{dry_run};
    # The time the set says, once written: the stage counts from the write.
    my $when = $set->entry($id)->{current_from};
    $when = manifest_date($now) if $at_once || !defined $when;
    return { command => 'rollback', dir => $opt{dir}, prefix => $prefix, dry_run => $opt{dry_run} ? 1 : 0,
             from => $current ? 0 + $current->{entry}{id} : undef, to => 0 + $id,
             current_from => $when, at_once => $at_once ? 1 : 0,
             cancelled => [ map { 0 + $_->{entry}{id} } grep { $_ != $to } @staged ] };
}

1;
__END__

=head1 NAME

Cache::Memcached::RustXS::Dict::Rollout - cmrx-dict list and rollback: a dictionary set's schedule, and going back to an earlier dictionary

=head1 SYNOPSIS

    use File::Temp ();
    use Cache::Memcached::RustXS::Zstd qw(train_dictionary);
    use Cache::Memcached::RustXS::Zstd::DictionarySet;
    use Cache::Memcached::RustXS::Dict::Rollout qw(list_set rollback_set);
    use Cache::Memcached::RustXS::Dict::Report qw(print_list print_rollback);

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
C<cmrx-dict list> and C<cmrx-dict rollback>. Their output, as text and
as the data C<--json> prints, is L<Cache::Memcached::RustXS::Dict::Report>'s
(C<print_list>, C<list_data>, C<print_rollback>, C<rollback_data>). See
L<Cache::Memcached::RustXS::Zstd::DictionarySet/Staging and rolling back>
for what staging means.

=head1 FUNCTIONS

=over 4

=item list_set(dir => $dir, now => $epoch)

Every dictionary of the set in C<$dir> with its state at C<now> (by
default the clock of L<Cache::Memcached::RustXS::Zstd::DictionarySet::State>) and since
when (as L<Cache::Memcached::RustXS::Zstd::DictionarySet/schedule(at =E<gt> $epoch)>
says): a hash reference with C<dir>, C<identity>, C<now>, C<fallback>,
C<next_change> (when a staged dictionary starts next, or C<undef>) and
C<dictionaries>, a list of C<< { id, prefix, state, since, level, size,
file, trained, savings } >> (C<state>: C<current>, C<staged>, C<retired> or
C<removed>). Fails (L<Cache::Memcached::RustXS::Dict/fail>) when the folder
holds no readable set.

=item rollback_set(dir => $dir, prefix => $prefix, to => $id, stage => 3600, dry_run => 0)

Makes an earlier dictionary of C<$prefix> (the empty string: the whole
cache) current again, staged C<stage> seconds after the set is written
(0: at once), and writes the set unless C<dry_run>. The dictionary is C<to> when given, else:
when a decision (a retrain or an earlier rollback) is staged for the
prefix, the current one (the staged ones are cancelled and nothing else
changes, at once: the newest decision holds); otherwise the dictionary the
prefix's writers used last before the current one, as the set's state at
this moment says (DictionarySet's C<previous>): after a staged retrain has
taken effect, the dictionary it took over from, whether or not the set was
written since (a staged dictionary that was cancelled is never chosen, and
a cancelled rollback changes no later choice). Repeated calls without
C<to> go back and forth between two dictionaries. Every
other staged dictionary of the prefix is cancelled. Returns a hash
reference with C<prefix>, C<from> (the current one), C<to>,
C<current_from> (the time the written set says), C<at_once>, C<cancelled> (IDs) and C<dry_run>. Fails when
the prefix has no dictionary, C<to> is another prefix's, removed, or
unknown, or there is nothing to go back to.

C<stage> defaults to C<$Cache::Memcached::RustXS::Dict::Rollout::DEFAULT_STAGE>
(3600 seconds), the same as C<cmrx-dict train --all --stage>: the earlier
dictionary is loaded by every reader already (retired dictionaries stay
loaded), so a rollback at once is safe; staging it makes every host switch
at one moment instead of as each receives the set.

=back

=head1 SEE ALSO

L<cmrx-dict>, L<Cache::Memcached::RustXS::Zstd::DictionarySet>.

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
